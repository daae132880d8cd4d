package top

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"xce/lib/api"
	"xce/lib/exec"
)

// Pane is one of the tabs.
type Pane int

// The panes, in tab order.
const (
	PaneHosts Pane = iota
	PaneQueues
	PaneJobs
	PaneUsers
	paneCount
)

var paneNames = [paneCount]string{"Hosts", "Queues", "Jobs", "Users"}

// Options configure a Model.
type Options struct {
	Ctl    Controller // nil: no actions, no drill-down fetches (tests)
	Pane   Pane
	Filter string           // initial filter (ParseFilter syntax)
	Me     string           // the caller's user name
	Now    func() time.Time // the clock; time.Now when nil
	// ReadFile reads a job's output from an offset (os by default).
	ReadFile func(path string, off int64) ([]byte, error)
	// Peek reads a running job's output from an offset through the
	// worker of its host (the controller's Peek); nil: ReadFile.
	Peek func(j *api.Job, off int64) ([]byte, error)
	// Once draws frames for a pipe (xcetop --once): see Frame.
	Once bool
}

type mode int

const (
	modeNormal mode = iota
	modeFilter
	modePrompt  // typing an argument (the queue of a switch)
	modeConfirm // y/n
	modeHelp
	modeDetail
)

// Model is xcetop's state: every job, host and queue the controller
// reported, the pane shown, the filter and the selection. It is fed by
// messages (see Feed) and drawn by View; only the visible rows are drawn.
type Model struct {
	opt   Options
	now   time.Time
	w, h  int
	pane  Pane
	mode  mode
	info  *api.ClusterInfo
	admin bool
	up    bool
	err   error
	ever  bool // connected at least once

	jobs   map[jobKey]*jobRow
	specs  map[int64]*api.JobSpec // effective specs by job id (array elements share one)
	hosts  []*hostRow
	hist   map[string]*history
	queues []*api.Queue
	users  []*userRow

	filter             Filter
	sortCol            int
	sortDesc           bool
	dirty              bool      // the job list must be filtered and sorted again
	hostsDirty         bool      // the host list must be filtered again
	stale              bool      // the overview and users must be recounted
	resort             bool      // every job must be sorted again
	added              []*jobRow // changed jobs not yet merged into all and view
	all                []*jobRow // every job, sorted
	view               []*jobRow // filtered and sorted jobs
	agg                aggregate
	hview              []*hostRow
	ov                 overview
	subs, starts, ends rate

	sel    [paneCount]int // selected row per pane
	top    [paneCount]int // first visible row per pane
	selKey jobKey

	input     textinput.Model
	confirm   *action
	status    string
	statusErr bool

	detail *detail
	vp     viewport.Model
}

// detail is a drill-down: a job (long form, pending reasons, output) or a
// host (its jobs and load history).
type detail struct {
	job     jobKey
	host    string
	full    *api.Job
	long    string
	out     []byte
	outPath string
	outOff  int64
	outErr  string
	follow  bool
}

// New returns a model with no data yet.
func New(opt Options) *Model {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.ReadFile == nil {
		opt.ReadFile = readFrom
	}
	ti := textinput.New()
	ti.Prompt = ""
	ti.CharLimit = 200
	m := &Model{
		opt:    opt,
		now:    opt.Now(),
		w:      80,
		h:      24,
		pane:   opt.Pane,
		jobs:   map[jobKey]*jobRow{},
		hist:   map[string]*history{},
		filter: ParseFilter(opt.Filter),
		input:  ti,
		vp:     viewport.New(80, 10),
		dirty:  true,
		specs:  map[int64]*api.JobSpec{},
		agg:    newAggregate(),
	}
	m.subs.advance(m.now)
	m.starts.advance(m.now)
	m.ends.advance(m.now)
	return m
}

type tickMsg time.Time

func tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// Init starts the clock.
func (m *Model) Init() tea.Cmd { return tick() }

// statusMsg reports an action's outcome.
type statusMsg struct {
	text string
	err  bool
}

// detailMsg brings a drilled-into job in full.
type detailMsg struct {
	key jobKey
	job *api.Job
	err error
}

// Update applies a message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		m.layoutDetail()
	case tickMsg:
		m.now = m.opt.Now()
		m.advance()
		m.stale = true
		m.tailOutput()
		cmd = tick()
	case InfoMsg:
		m.info = msg.Info
		m.admin = msg.Info.GetCallerIsAdmin()
	case ConnMsg:
		m.up, m.err = msg.Up, msg.Err
		if msg.Up {
			m.ever = true
		}
	case SnapshotMsg:
		m.setJobs(msg.Jobs)
	case JobsMsg:
		m.applyJobs(msg.Jobs)
		// The job being looked at changed: fetch it whole again.
		if d := m.detail; d != nil && d.host == "" {
			for _, j := range msg.Jobs {
				if (jobKey{j.GetJobId(), j.GetArrayIndex()}) == d.job {
					cmd = m.fetchDetail(d.job)
					break
				}
			}
		}
	case HostsMsg:
		m.setHosts(msg.Hosts)
		m.stale = true
	case QueuesMsg:
		m.queues = msg.Queues
		m.stale = true
	case statusMsg:
		m.status, m.statusErr = msg.text, msg.err
	case detailMsg:
		if m.detail != nil && m.detail.job == msg.key {
			if msg.err != nil {
				m.detail.outErr = msg.err.Error()
			} else if msg.job != nil {
				m.detail.full = msg.job
				if p := exec.OutputPath(msg.job); p != m.detail.outPath {
					// A spooled job's output moves from the spool file
					// to its -o file when it ends: read that afresh.
					m.detail.outPath, m.detail.out, m.detail.outOff = p, nil, 0
				}
				m.tailOutput()
			}
			m.layoutDetail()
		}
	case tea.KeyMsg:
		cmd = m.key(msg)
	}
	m.refresh()
	return m, cmd
}

// refilter asks for the job and host lists to be filtered again.
func (m *Model) refilter() { m.dirty, m.hostsDirty = true, true }

// refresh brings what the view shows up to date with what came in.
func (m *Model) refresh() {
	switch {
	case m.dirty || m.resort || m.hostsDirty || len(m.added) > 0:
		m.rebuild()
	case m.stale:
		m.overview()
		m.usersRows()
	}
	m.stale = false
}

func (m *Model) advance() {
	m.subs.advance(m.now)
	m.starts.advance(m.now)
	m.ends.advance(m.now)
}

func (m *Model) setJobs(jobs []*api.Job) {
	old := m.jobs
	m.jobs = make(map[jobKey]*jobRow, len(jobs))
	m.agg = newAggregate()
	m.added = nil
	m.subs, m.starts, m.ends = rate{}, rate{}, rate{}
	m.advance()
	for _, j := range jobs {
		k := jobKey{j.GetJobId(), j.GetArrayIndex()}
		if j.GetEffective() == nil {
			if o := old[k]; o != nil {
				j.Effective = o.job.GetEffective()
			} else {
				j.Effective = m.specs[k.id]
			}
		}
		if e := j.GetEffective(); e != nil {
			m.specs[k.id] = e
		}
		r := newJobRow(j)
		m.jobs[k] = r
		m.agg.account(r, 1)
		m.subs.add(j.GetSubmitTime())
		m.starts.add(j.GetStartTime())
		m.ends.add(j.GetEndTime())
	}
	m.resort = true
}

func (m *Model) applyJobs(jobs []*api.Job) {
	for _, j := range jobs {
		k := jobKey{j.GetJobId(), j.GetArrayIndex()}
		o := m.jobs[k]
		if o != nil {
			if j.GetSeq() != 0 && j.GetSeq() < o.job.GetSeq() {
				continue // older than what we have
			}
			if j.GetEffective() == nil {
				j.Effective = o.job.GetEffective()
				if j.Spec == nil {
					j.Spec = o.job.GetSpec()
				}
			}
			if j.GetPendReason() == "" && classOf(j.GetState()) == clsPend {
				j.PendReason = o.job.GetPendReason()
			}
			if j.GetStartTime() != 0 && j.GetStartTime() != o.job.GetStartTime() {
				m.starts.add(j.GetStartTime())
			}
			if j.GetEndTime() != 0 && o.job.GetEndTime() == 0 {
				m.ends.add(j.GetEndTime())
			}
			o.gone = true
			m.agg.account(o, -1)
		} else {
			if j.GetEffective() == nil {
				// An element of an array seen before shares its spec.
				j.Effective = m.specs[k.id]
			}
			m.subs.add(j.GetSubmitTime())
			m.starts.add(j.GetStartTime())
			m.ends.add(j.GetEndTime())
		}
		if e := j.GetEffective(); e != nil {
			m.specs[k.id] = e
		}
		r := newJobRow(j)
		m.jobs[k] = r
		m.agg.account(r, 1)
		m.added = append(m.added, r)
	}
}

func (m *Model) setHosts(hs []*api.Host) {
	m.hosts = make([]*hostRow, len(hs))
	for i, h := range hs {
		m.hosts[i] = &hostRow{host: h}
		hi := m.hist[h.GetName()]
		if hi == nil {
			hi = &history{}
			m.hist[h.GetName()] = hi
		}
		hi.add(h.GetR1M(), h.GetUt())
	}
	slices.SortFunc(m.hosts, func(a, b *hostRow) int { return strings.Compare(a.host.GetName(), b.host.GetName()) })
	m.hostsDirty = true
}

// rebuild brings the job list, the host list, the overview and the users
// up to date: in full when the filter or the sort changed or a snapshot
// came, else by merging the changed jobs into the sorted list, so that a
// batch from the watch stream costs about what it changes.
func (m *Model) rebuild() {
	switch {
	case m.resort || len(m.added) > len(m.jobs)/4:
		all := m.all[:0]
		for _, r := range m.jobs {
			all = append(all, r)
		}
		sortRows(all, m.sortCol, m.sortDesc)
		m.all = all
		m.resort, m.dirty = false, true
	case len(m.added) > 0:
		var add []*jobRow
		for _, r := range m.added {
			if !r.gone {
				add = append(add, r)
			}
		}
		sortRows(add, m.sortCol, m.sortDesc)
		m.all = mergeRows(m.all, add, m.sortCol, m.sortDesc)
		if !m.dirty {
			shown := add[:0]
			for _, r := range add {
				if m.filter.match(r) {
					shown = append(shown, r)
				}
			}
			m.view = mergeRows(m.view, shown, m.sortCol, m.sortDesc)
		}
	}
	if m.dirty {
		// The jobs are sorted already: filtering keeps their order.
		view := m.view[:0]
		for _, r := range m.all {
			if m.filter.match(r) {
				view = append(view, r)
			}
		}
		m.view = view
	}
	m.dirty = false
	m.added = m.added[:0]

	if m.hostsDirty {
		m.hostsDirty = false
		hview := m.hview[:0]
		for _, h := range m.hosts {
			if m.hostMatch(h.host) {
				hview = append(hview, h)
			}
		}
		m.hview = hview
	}
	m.overview()
	m.usersRows()
	m.keepSelection()
}

// overview sums the hosts and the counted jobs for the header.
func (m *Model) overview() {
	ov := overview{}
	a := &m.agg
	copy(ov.jobs[:], a.counts[:])
	from := m.now.Add(-time.Hour).Unix() / 60
	for c := range a.fin {
		for min, n := range a.fin[c] {
			if min >= from {
				ov.jobs[clsDone+stateClass(c)] += n
			} else if n == 0 {
				delete(a.fin[c], min)
			}
		}
	}
	ov.memResvKB, ov.gpusUsed = a.resvKB, a.gpus
	for _, h := range m.hosts {
		hh := h.host
		h.jobs = a.hostJobs[hh.GetName()]
		if st := int(hh.GetState()); st < len(ov.hosts) {
			ov.hosts[st]++
		}
		if busyNotClosed(hh) {
			ov.hostsFull++
		}
		ov.slotsTotal += int64(hh.GetMaxSlots())
		ov.slotsUsed += int64(hh.GetNjobs())
		ov.memTotalKB += hh.GetMaxmemKb()
		if hh.GetState() == api.HostState_HOST_OK || hh.GetState() == api.HostState_HOST_CLOSED {
			ov.memUsedKB += max(0, hh.GetMaxmemKb()-hh.GetMemKb())
		}
		ov.gpusTotal += int64(hh.GetNgpus())
	}
	m.ov = ov
}

// usersRows lists the users with unfinished jobs, busiest first.
func (m *Model) usersRows() {
	shares := map[string]int32{}
	prio := map[string]float64{} // the controller's dynamic priority, the best over queues
	fair := false
	for _, q := range m.queues {
		for u, s := range q.GetUserShares() {
			fair = true
			if s > shares[u] {
				shares[u] = s
			}
		}
		for u, p := range q.GetUserPriority() {
			if old, ok := prio[u]; !ok || p > old {
				prio[u] = p
			}
		}
	}
	m.users = m.users[:0]
	for _, u := range m.agg.users {
		if u.pend+u.run+u.susp == 0 {
			continue
		}
		if fair {
			u.shares = shares[u.name]
			if u.shares == 0 {
				u.shares = shares["default"]
			}
			u.priority = float64(u.shares) / float64(1+u.run)
			if p, ok := prio[u.name]; ok {
				u.priority = p
			}
		} else {
			u.priority = -1
		}
		m.users = append(m.users, u)
	}
	slices.SortFunc(m.users, func(a, b *userRow) int {
		if c := (b.run + b.pend) - (a.run + a.pend); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
}

// keepSelection keeps the selected job selected when rows move.
func (m *Model) keepSelection() {
	if m.selKey != (jobKey{}) {
		for i, r := range m.view {
			if (jobKey{r.job.GetJobId(), r.job.GetArrayIndex()}) == m.selKey {
				m.sel[PaneJobs] = i
				break
			}
		}
	}
	for p := range paneCount {
		m.clampSel(p)
	}
	if m.detail != nil && m.detail.host != "" {
		m.layoutDetail()
	}
}

func (m *Model) hostMatch(h *api.Host) bool {
	if m.filter.Host != "" && h.GetName() != m.filter.Host {
		return false
	}
	if m.filter.Text != "" && !strings.Contains(strings.ToLower(h.GetName()+" "+stateWord(h)), m.filter.Text) {
		return false
	}
	return true
}

func (m *Model) rows(p Pane) int {
	switch p {
	case PaneHosts:
		return len(m.hview)
	case PaneQueues:
		return len(m.queues)
	case PaneJobs:
		return len(m.view)
	case PaneUsers:
		return len(m.users)
	}
	return 0
}

func (m *Model) clampSel(p Pane) {
	n := m.rows(p)
	if m.sel[p] >= n {
		m.sel[p] = n - 1
	}
	if m.sel[p] < 0 {
		m.sel[p] = 0
	}
	page := m.tableRows()
	if m.top[p] > m.sel[p] {
		m.top[p] = m.sel[p]
	}
	if m.sel[p] >= m.top[p]+page {
		m.top[p] = m.sel[p] - page + 1
	}
	if m.top[p] > max(0, n-page) {
		m.top[p] = max(0, n-page)
	}
	if m.top[p] < 0 {
		m.top[p] = 0
	}
}

func (m *Model) selectedJob() *jobRow {
	if m.detail != nil && m.detail.host == "" {
		if r := m.jobs[m.detail.job]; r != nil {
			return r
		}
	}
	if m.pane != PaneJobs || len(m.view) == 0 {
		return nil
	}
	return m.view[m.sel[PaneJobs]]
}

func (m *Model) move(d int) {
	p := m.pane
	m.sel[p] += d
	m.clampSel(p)
	if p == PaneJobs && len(m.view) > 0 {
		r := m.view[m.sel[p]].job
		m.selKey = jobKey{r.GetJobId(), r.GetArrayIndex()}
	}
}

var keys = struct {
	quit, help, tab, backtab, up, down, pgup, pgdn, home, end, enter, back, filter, sort, rev key.Binding
}{
	quit:    key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
	help:    key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "keys")),
	tab:     key.NewBinding(key.WithKeys("tab", "right", "l"), key.WithHelp("tab", "next pane")),
	backtab: key.NewBinding(key.WithKeys("shift+tab", "left", "h"), key.WithHelp("shift+tab", "previous pane")),
	up:      key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
	down:    key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
	pgup:    key.NewBinding(key.WithKeys("pgup", "ctrl+b"), key.WithHelp("pgup", "page up")),
	pgdn:    key.NewBinding(key.WithKeys("pgdown", "ctrl+f", " "), key.WithHelp("pgdn", "page down")),
	home:    key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g", "first")),
	end:     key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G", "last")),
	enter:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "details")),
	back:    key.NewBinding(key.WithKeys("esc", "backspace"), key.WithHelp("esc", "back")),
	filter:  key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
	sort:    key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "sort column")),
	rev:     key.NewBinding(key.WithKeys("O"), key.WithHelp("O", "reverse sort")),
}

// helpText is what ? shows.
const helpText = `xcetop keys                                       (any key closes this)
 1 2 3 4  tab  shift+tab   hosts, queues, jobs, users
 ↑/k ↓/j  pgup pgdn  g G   move
 enter     a job: bjobs -l and its output; a host: its jobs and load;
           a queue or a user: its jobs
 esc       back; clears the filter      f   follow a job's output
 /         filter: user:U queue:Q state:S host:H and words (u: q: s: h:)
 o O       sort jobs by the next column; reverse the order
 jobs      K kill  S stop  R resume  E requeue  W switch queue
           T top  B bottom (of its queue's pending jobs)
 hosts     C close  O open
 queues    C close  O open  I inactivate  A activate
           each asks first: y does it, any other key does not
 q         quit`

func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	switch m.mode {
	case modeHelp:
		m.mode = modeNormal
		if m.detail != nil {
			m.mode = modeDetail
		}
		return nil
	case modeFilter:
		switch msg.Type {
		case tea.KeyEnter:
			m.filter = ParseFilter(m.input.Value())
			m.leaveInput()
			m.refilter()
			return nil
		case tea.KeyEsc:
			m.leaveInput()
			return nil
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return cmd
	case modePrompt:
		switch msg.Type {
		case tea.KeyEnter:
			a := m.confirm
			a.arg = strings.TrimSpace(m.input.Value())
			m.input.Blur()
			if a.arg == "" {
				m.cancelAction()
				return nil
			}
			m.mode = modeConfirm
			return nil
		case tea.KeyEsc:
			m.input.Blur()
			m.cancelAction()
			return nil
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return cmd
	case modeConfirm:
		a := m.confirm
		m.confirm = nil
		m.mode = modeNormal
		if m.detail != nil {
			m.mode = modeDetail
		}
		if msg.String() == "y" || msg.String() == "Y" {
			m.status = a.text + "..."
			m.statusErr = false
			return m.run(a)
		}
		m.status = "cancelled"
		return nil
	}

	switch {
	case key.Matches(msg, keys.quit):
		return tea.Quit
	case key.Matches(msg, keys.help):
		m.mode = modeHelp
		return nil
	}
	if a := m.actionFor(msg.String()); a != nil {
		return m.begin(a)
	}
	if m.mode == modeDetail {
		switch {
		case key.Matches(msg, keys.back):
			m.detail = nil
			m.mode = modeNormal
			return nil
		case msg.String() == "f":
			m.detail.follow = !m.detail.follow
			m.layoutDetail()
			if !m.detail.follow {
				m.vp.GotoTop()
			}
			return nil
		}
		var cmd tea.Cmd
		m.vp, cmd = m.vp.Update(msg)
		if msg.String() == "G" || msg.String() == "end" {
			m.vp.GotoBottom()
		}
		if msg.String() == "g" || msg.String() == "home" {
			m.vp.GotoTop()
		}
		if m.detail.follow && !m.vp.AtBottom() {
			m.detail.follow = false
		}
		return cmd
	}
	switch s := msg.String(); {
	case s >= "1" && s <= "4" && len(s) == 1:
		m.pane = Pane(s[0] - '1')
	case key.Matches(msg, keys.tab):
		m.pane = (m.pane + 1) % paneCount
	case key.Matches(msg, keys.backtab):
		m.pane = (m.pane + paneCount - 1) % paneCount
	case key.Matches(msg, keys.up):
		m.move(-1)
	case key.Matches(msg, keys.down):
		m.move(1)
	case key.Matches(msg, keys.pgup):
		m.move(-m.tableRows())
	case key.Matches(msg, keys.pgdn):
		m.move(m.tableRows())
	case key.Matches(msg, keys.home):
		m.move(-m.rows(m.pane))
	case key.Matches(msg, keys.end):
		m.move(m.rows(m.pane))
	case key.Matches(msg, keys.filter):
		m.mode = modeFilter
		m.input.SetValue(m.filter.String())
		m.input.CursorEnd()
		return m.input.Focus()
	case key.Matches(msg, keys.back):
		if !m.filter.empty() {
			m.filter = Filter{}
			m.refilter()
		}
		m.status = ""
	case key.Matches(msg, keys.sort):
		m.sortCol = (m.sortCol + 1) % colNum
		m.resort = true
	case key.Matches(msg, keys.rev):
		m.sortDesc = !m.sortDesc
		m.resort = true
	case key.Matches(msg, keys.enter):
		return m.enter()
	}
	return nil
}

func (m *Model) leaveInput() {
	m.input.Blur()
	m.mode = modeNormal
	if m.detail != nil {
		m.mode = modeDetail
	}
}

// enter drills into the selected row.
func (m *Model) enter() tea.Cmd {
	switch m.pane {
	case PaneJobs:
		r := m.selectedJob()
		if r == nil {
			return nil
		}
		k := jobKey{r.job.GetJobId(), r.job.GetArrayIndex()}
		m.detail = &detail{job: k, full: r.job, outPath: exec.OutputPath(r.job)}
		m.mode = modeDetail
		m.tailOutput()
		m.layoutDetail()
		return m.fetchDetail(k)
	case PaneHosts:
		if len(m.hview) == 0 {
			return nil
		}
		m.detail = &detail{host: m.hview[m.sel[PaneHosts]].host.GetName()}
		m.mode = modeDetail
		m.layoutDetail()
	case PaneQueues:
		if len(m.queues) == 0 {
			return nil
		}
		m.filter = Filter{Queue: m.queues[m.sel[PaneQueues]].GetName()}
		m.pane = PaneJobs
		m.refilter()
	case PaneUsers:
		if len(m.users) == 0 {
			return nil
		}
		m.filter = Filter{User: m.users[m.sel[PaneUsers]].name}
		m.pane = PaneJobs
		m.refilter()
	}
	return nil
}

func (m *Model) fetchDetail(k jobKey) tea.Cmd {
	ctl := m.opt.Ctl
	if ctl == nil {
		return nil
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		jobs, err := ctl.Jobs(ctx, []*api.JobRef{{JobId: k.id, ArrayIndex: k.idx}}, true)
		if err != nil {
			return detailMsg{key: k, err: err}
		}
		for _, j := range jobs {
			if j.GetArrayIndex() == k.idx {
				return detailMsg{key: k, job: j}
			}
		}
		return detailMsg{key: k}
	}
}

// reportMarker starts the report the shepherd appends to a job's output
// when it ends; it is not output (bpeek stops there too).
const reportMarker = "\n------------------------------------------------------------\nSender: LSF System"

// A spooled job's -o file starts with its report; the output comes after
// spooledMarker.
const (
	spooledReport = "Sender: LSF System"
	spooledMarker = "\nThe output (if any) follows:\n\n"
)

// maxTail is how much of a job's output the detail keeps.
const maxTail = 64 << 10

// tailOutput reads what the drilled-into job wrote since the last look.
func (m *Model) tailOutput() {
	d := m.detail
	if d == nil || d.host != "" || d.outPath == "" {
		return
	}
	var b []byte
	var err error
	if m.opt.Peek != nil && d.full != nil && running(d.full.State) {
		b, err = m.opt.Peek(d.full, d.outOff)
	} else {
		b, err = m.opt.ReadFile(d.outPath, d.outOff)
	}
	if err != nil {
		d.outErr = fmt.Sprintf("output not readable from here: %v", err)
		m.layoutDetail()
		return
	}
	d.outErr = ""
	if len(b) == 0 {
		return
	}
	d.outOff += int64(len(b))
	d.out = append(d.out, b...)
	if d.outOff == int64(len(d.out)) && strings.HasPrefix(string(d.out), spooledReport) {
		i := strings.Index(string(d.out), spooledMarker)
		if i < 0 {
			// The report is still being written: read it again later.
			d.out, d.outOff = nil, 0
			return
		}
		d.out = d.out[i+len(spooledMarker):]
	}
	if i := strings.Index(string(d.out), reportMarker); i >= 0 {
		d.out = d.out[:i+1]
	}
	if len(d.out) > maxTail {
		d.out = d.out[len(d.out)-maxTail:]
	}
	m.layoutDetail()
}

func readFrom(path string, off int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() <= off {
		return nil, nil
	}
	if st.Size()-off > maxTail {
		off = st.Size() - maxTail
	}
	b := make([]byte, st.Size()-off)
	n, err := f.ReadAt(b, off)
	if n > 0 {
		return b[:n], nil
	}
	return nil, err
}

// running: the job's output is still being written on its host.
func running(s api.JobState) bool {
	switch s {
	case api.JobState_RUN, api.JobState_USUSP, api.JobState_SSUSP, api.JobState_UNKWN:
		return true
	}
	return false
}
