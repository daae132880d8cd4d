package top

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"xce/lib/api"
	"xce/lib/lsfout"
)

// jobKey names one job or array element.
type jobKey struct {
	id  int64
	idx int32
}

// jobRow is a job with the strings the table shows, computed once per
// change rather than once per frame.
type jobRow struct {
	job   *api.Job
	id    string // 123 or 123[4]
	user  string
	queue string
	name  string
	host  string // first execution host
	lower string // everything free-text filtering looks at, lower case

	cls    stateClass
	active bool  // holds slots: running or suspended after it started
	slots  int   // slots it holds or asks for
	resvKB int64 // memory its rusage reserves
	gpus   int64
	gone   bool // replaced by a newer row for the same job
}

func newJobRow(j *api.Job) *jobRow {
	r := &jobRow{job: j, id: lsfout.JobIDString(j)}
	e := j.GetEffective()
	if e == nil {
		e = j.GetSpec()
	}
	r.user = e.GetUser()
	r.queue = e.GetQueue()
	if e != nil {
		r.name = lsfout.DisplayName(j)
	}
	if hs := j.GetExecHosts(); len(hs) > 0 {
		r.host = hs[0].GetHost()
	}
	r.cls = classOf(j.GetState())
	r.active = r.cls == clsRun || r.cls == clsSusp && j.GetStartTime() != 0
	r.slots = int(j.GetAllocSlots())
	if r.slots == 0 {
		r.slots = max(1, int(e.GetMinTasks()))
	}
	if r.active {
		r.resvKB = reservedMemKB(j)
		r.gpus = gpusOf(j)
	}
	r.lower = strings.ToLower(r.id + " " + r.user + " " + r.queue + " " + r.name + " " + r.host + " " + j.GetState().String())
	return r
}

// stateClass groups job states the way the overview counts them.
type stateClass int

const (
	clsPend stateClass = iota
	clsRun
	clsSusp
	clsDone
	clsExit
	clsOther
)

func classOf(s api.JobState) stateClass {
	switch s {
	case api.JobState_PEND:
		return clsPend
	case api.JobState_RUN:
		return clsRun
	case api.JobState_PSUSP, api.JobState_USUSP, api.JobState_SSUSP:
		return clsSusp
	case api.JobState_DONE:
		return clsDone
	case api.JobState_EXIT:
		return clsExit
	}
	return clsOther
}

// Filter selects jobs. Every set field must match; Text matches anywhere
// in the row (id, user, queue, name, host, state), case-insensitively.
type Filter struct {
	User, Queue, State, Host, Text string
}

// ParseFilter reads "user:alice queue:normal state:RUN host:h1 words":
// the prefixed terms set a field (u:, q:, s:, h: for short), the rest is
// free text.
func ParseFilter(s string) Filter {
	var f Filter
	var text []string
	for _, w := range strings.Fields(s) {
		k, v, ok := strings.Cut(w, ":")
		if !ok || v == "" {
			text = append(text, w)
			continue
		}
		switch strings.ToLower(k) {
		case "user", "u":
			f.User = v
		case "queue", "q":
			f.Queue = v
		case "state", "stat", "s":
			f.State = strings.ToUpper(v)
		case "host", "h", "m":
			f.Host = v
		default:
			text = append(text, w)
		}
	}
	f.Text = strings.ToLower(strings.Join(text, " "))
	return f
}

// String is the filter as ParseFilter reads it.
func (f Filter) String() string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+":"+v)
		}
	}
	add("user", f.User)
	add("queue", f.Queue)
	add("state", f.State)
	add("host", f.Host)
	if f.Text != "" {
		parts = append(parts, f.Text)
	}
	return strings.Join(parts, " ")
}

func (f Filter) empty() bool { return f == Filter{} }

func (f Filter) match(r *jobRow) bool {
	if f.User != "" && f.User != "all" && r.user != f.User {
		return false
	}
	if f.Queue != "" && r.queue != f.Queue {
		return false
	}
	if f.State != "" {
		st := r.job.GetState()
		switch f.State {
		case "SUSP":
			if classOf(st) != clsSusp {
				return false
			}
		case "FIN", "FINISHED":
			if c := classOf(st); c != clsDone && c != clsExit {
				return false
			}
		default:
			if st.String() != f.State {
				return false
			}
		}
	}
	if f.Host != "" {
		found := false
		for _, h := range r.job.GetExecHosts() {
			if h.GetHost() == f.Host {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if f.Text != "" && !strings.Contains(r.lower, f.Text) {
		return false
	}
	return true
}

// Job table columns, in the order the sort key cycles through them.
const (
	colID = iota
	colUser
	colState
	colQueue
	colName
	colHost
	colSubmit
	colNum
)

var colNames = [colNum]string{"JOBID", "USER", "STAT", "QUEUE", "JOB_NAME", "EXEC_HOST", "SUBMIT_TIME"}

func lessRow(col int, a, b *jobRow) int {
	var c int
	switch col {
	case colUser:
		c = strings.Compare(a.user, b.user)
	case colState:
		c = int(a.job.GetState()) - int(b.job.GetState())
	case colQueue:
		c = strings.Compare(a.queue, b.queue)
	case colName:
		c = strings.Compare(a.name, b.name)
	case colHost:
		c = strings.Compare(a.host, b.host)
	case colSubmit:
		c = cmpInt(a.job.GetSubmitTime(), b.job.GetSubmitTime())
	}
	if c != 0 {
		return c
	}
	if c = cmpInt(a.job.GetJobId(), b.job.GetJobId()); c != 0 {
		return c
	}
	return int(a.job.GetArrayIndex()) - int(b.job.GetArrayIndex())
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// rate counts events per minute over the last rateMinutes minutes.
const rateMinutes = 30

type rate struct {
	buckets [rateMinutes]int
	minute  int64 // the unix minute of the last bucket
}

func (r *rate) advance(now time.Time) {
	m := now.Unix() / 60
	if r.minute == 0 {
		r.minute = m
		return
	}
	shift := m - r.minute
	if shift <= 0 {
		return
	}
	if shift >= rateMinutes {
		r.buckets = [rateMinutes]int{}
	} else {
		copy(r.buckets[:], r.buckets[shift:])
		for i := rateMinutes - int(shift); i < rateMinutes; i++ {
			r.buckets[i] = 0
		}
	}
	r.minute = m
}

// add counts one event at ns (unix nanoseconds) if it falls in the window.
func (r *rate) add(ns int64) {
	if ns == 0 || r.minute == 0 {
		return
	}
	i := rateMinutes - 1 - int(r.minute-ns/int64(time.Minute))
	if i >= 0 && i < rateMinutes {
		r.buckets[i]++
	}
}

func (r *rate) last() int { return r.buckets[rateMinutes-1] }

// overview is what the header shows.
type overview struct {
	hosts      [5]int // by api.HostState
	hostsFull  int    // of hosts[HOST_CLOSED]: full or exclusive, not closed by an administrator
	slotsUsed  int64
	slotsTotal int64
	memTotalKB int64
	memUsedKB  int64
	memResvKB  int64
	gpusTotal  int64
	gpusUsed   int64
	jobs       [clsOther + 1]int
}

var rusageMem = regexp.MustCompile(`rusage\[[^\]]*\bmem=([0-9.]+)([KMGTkmgt]?)`)

// reservedMemKB is the memory a job's rusage reserves (MB unless a unit is
// given, as LSF reads it), once per job.
func reservedMemKB(j *api.Job) int64 {
	var kb int64
	for _, rr := range j.GetEffective().GetResReq() {
		m := rusageMem.FindStringSubmatch(rr)
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			continue
		}
		mult := 1024.0
		switch strings.ToUpper(m[2]) {
		case "K":
			mult = 1
		case "G":
			mult = 1024 * 1024
		case "T":
			mult = 1024 * 1024 * 1024
		}
		if n := int64(v * mult); n > kb {
			kb = n
		}
	}
	return kb
}

var gpuNum = regexp.MustCompile(`\bnum=(\d+)`)

// gpusOf is the GPUs a job asked for with -gpu (num=N, 1 when not given).
func gpusOf(j *api.Job) int64 {
	g := j.GetEffective().GetGpu()
	if g == "" {
		return 0
	}
	if m := gpuNum.FindStringSubmatch(g); m != nil {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		return n
	}
	return 1
}

// userRow is one line of the users pane.
type userRow struct {
	name     string
	pend     int
	run      int // slots of running jobs
	susp     int
	shares   int32 // the user's share in a fairshare queue (the largest)
	priority float64
}

// hostRow is a host with its running jobs counted and its load history.
type hostRow struct {
	host *api.Host
	jobs int
}

const historyLen = 60

// history is a ring of a host's r1m and ut samples, one per host poll.
type history struct {
	r1m, ut [historyLen]float32
	n, next int
}

func (h *history) add(r1m, ut float64) {
	h.r1m[h.next] = float32(r1m)
	h.ut[h.next] = float32(ut)
	h.next = (h.next + 1) % historyLen
	if h.n < historyLen {
		h.n++
	}
}

// values returns the samples oldest first.
func (h *history) values(ut bool) []float64 {
	src := &h.r1m
	if ut {
		src = &h.ut
	}
	out := make([]float64, 0, h.n)
	for i := 0; i < h.n; i++ {
		out = append(out, float64(src[(h.next-h.n+i+historyLen)%historyLen]))
	}
	return out
}

// sortRows sorts jobs by column (descending when desc), ties by job id.
// Each row's order is packed into two integers first (a string column by
// the rank of its value among the distinct values), so that sorting
// 100,000 rows compares integers in contiguous memory rather than strings
// behind 100,000 pointers.
func sortRows(rows []*jobRow, col int, desc bool) {
	type item struct {
		k1, k2 uint64
		s      string // job names: mostly distinct, compared as they are
		r      *jobRow
	}
	var str func(r *jobRow) string
	switch col {
	case colUser:
		str = func(r *jobRow) string { return r.user }
	case colQueue:
		str = func(r *jobRow) string { return r.queue }
	case colHost:
		str = func(r *jobRow) string { return r.host }
	}
	var rank map[string]uint64
	if str != nil {
		rank = map[string]uint64{}
		for _, r := range rows {
			rank[str(r)] = 0
		}
		keys := make([]string, 0, len(rank))
		for k := range rank {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			rank[k] = uint64(i)
		}
	}
	items := make([]item, len(rows))
	for i, r := range rows {
		it := item{k2: uint64(r.job.GetJobId())<<21 | uint64(r.job.GetArrayIndex())&(1<<21-1), r: r}
		switch {
		case str != nil:
			it.k1 = rank[str(r)]
		case col == colName:
			it.s = r.name
			it.k1 = prefix8(r.name)
		case col == colState:
			it.k1 = uint64(r.job.GetState())
		case col == colSubmit:
			it.k1 = uint64(r.job.GetSubmitTime())
		}
		if desc {
			it.k1, it.k2 = ^it.k1, ^it.k2
		}
		items[i] = it
	}
	// Radix sort on (k1, k2): a few linear passes, whatever the order
	// the rows came in.
	tmp := make([]item, len(items))
	for _, key := range []func(*item) uint64{func(it *item) uint64 { return it.k2 }, func(it *item) uint64 { return it.k1 }} {
		for shift := 0; shift < 64; shift += 8 {
			var count [256]int
			for i := range items {
				count[key(&items[i])>>shift&0xff]++
			}
			if slices.Contains(count[:], len(items)) {
				continue // every key has the same byte here
			}
			pos := 0
			for b := range count {
				count[b], pos = pos, pos+count[b]
			}
			for i := range items {
				b := key(&items[i]) >> shift & 0xff
				tmp[count[b]] = items[i]
				count[b]++
			}
			items, tmp = tmp, items
		}
	}
	// Job names equal in their first 8 bytes: order those runs by the
	// whole name.
	if col == colName {
		for i := 0; i < len(items); {
			j := i + 1
			for j < len(items) && items[j].k1 == items[i].k1 {
				j++
			}
			if j-i > 1 {
				slices.SortStableFunc(items[i:j], func(a, b item) int {
					if desc {
						return strings.Compare(b.s, a.s)
					}
					return strings.Compare(a.s, b.s)
				})
			}
			i = j
		}
	}
	for i := range items {
		rows[i] = items[i].r
	}
}

// prefix8 is the first 8 bytes of s as a big-endian integer: integers
// compare as the strings' prefixes do.
func prefix8(s string) uint64 {
	var k uint64
	for i := range 8 {
		k <<= 8
		if i < len(s) {
			k |= uint64(s[i])
		}
	}
	return k
}

// aggregate is what the overview and the users pane count, kept up to
// date job by job (a change subtracts the old row and adds the new one)
// rather than recounted over every job.
type aggregate struct {
	counts   [clsOther + 1]int   // unfinished jobs by class
	fin      [2]map[int64]int    // DONE and EXIT jobs by unix minute of their end
	resvKB   int64               // memory reserved by running jobs
	gpus     int64               // GPUs of running jobs
	hostJobs map[string]int      // running jobs by host
	users    map[string]*userRow // slots by user
}

func newAggregate() aggregate {
	return aggregate{fin: [2]map[int64]int{{}, {}}, hostJobs: map[string]int{}, users: map[string]*userRow{}}
}

func (a *aggregate) account(r *jobRow, sign int) {
	switch r.cls {
	case clsDone, clsExit:
		a.fin[r.cls-clsDone][r.job.GetEndTime()/int64(time.Minute)] += sign
		return
	}
	a.counts[r.cls] += sign
	if r.active {
		a.resvKB += int64(sign) * r.resvKB
		a.gpus += int64(sign) * r.gpus
		for _, h := range r.job.GetExecHosts() {
			a.hostJobs[h.GetHost()] += sign
		}
	}
	if r.user == "" {
		return
	}
	u := a.users[r.user]
	if u == nil {
		u = &userRow{name: r.user}
		a.users[r.user] = u
	}
	switch r.cls {
	case clsPend:
		u.pend += sign * r.slots
	case clsRun:
		u.run += sign * r.slots
	case clsSusp:
		u.susp += sign * r.slots
	}
}

// mergeRows drops the replaced rows from view (sorted) and merges add
// (sorted the same way) into it.
func mergeRows(view, add []*jobRow, col int, desc bool) []*jobRow {
	kept := view[:0]
	for _, r := range view {
		if !r.gone {
			kept = append(kept, r)
		}
	}
	if len(add) == 0 {
		return kept
	}
	out := make([]*jobRow, 0, len(kept)+len(add))
	i, j := 0, 0
	for i < len(kept) && j < len(add) {
		c := lessRow(col, add[j], kept[i])
		if desc {
			c = -c
		}
		if c < 0 {
			out = append(out, add[j])
			j++
		} else {
			out = append(out, kept[i])
			i++
		}
	}
	out = append(out, kept[i:]...)
	return append(out, add[j:]...)
}
