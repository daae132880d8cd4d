package lsfout

import (
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"xce/lib/api"
)

// Custom is a parsed bqueues -o or bhosts -o specification (or
// LSB_BQUEUES_FORMAT, LSB_BHOSTS_FORMAT): the same syntax, widths,
// justification and delimiter as bjobs -o (see ParseFormat), over the
// command's own fields.
type Custom[T any] struct {
	table[T]
	command, countKey string
}

// ParseQueuesFormat parses a bqueues -o specification (queueFields).
func ParseQueuesFormat(spec string) (*Custom[*api.Queue], error) {
	t, err := parseColumns(spec, queueFields(), queueFieldByName())
	if err != nil {
		return nil, err
	}
	return &Custom[*api.Queue]{table: t, command: "bqueues", countKey: "QUEUES"}, nil
}

// ParseHostsFormat parses a bhosts -o specification (hostFields).
func ParseHostsFormat(spec string) (*Custom[*api.Host], error) {
	t, err := parseColumns(spec, hostFields(), hostFieldByName())
	if err != nil {
		return nil, err
	}
	return &Custom[*api.Host]{table: t, command: "bhosts", countKey: "HOSTS"}, nil
}

func (f *Custom[T]) ctx() *fieldCtx { return &fieldCtx{loc: time.Local} }

// Write prints the records as a table: a header of upper-case field names
// (unless noheader), then one line per record; an empty value prints "-".
func (f *Custom[T]) Write(w io.Writer, recs []T, noheader bool) error {
	return f.write(w, f.ctx(), recs, noheader)
}

// WriteJSON prints -o ... -json: {"COMMAND":"bqueues","QUEUES":n,
// "RECORDS":[...]} (bhosts: "HOSTS"), every value a string, "" when empty.
func (f *Custom[T]) WriteJSON(w io.Writer, recs []T) error {
	return writeJSON(w, f.command, f.countKey, f.records(f.ctx(), recs))
}

func qstr(get func(q *api.Queue) string) func(*fieldCtx, *api.Queue) string { return str(get) }

func qcount(get func(q *api.Queue) int32) func(*fieldCtx, *api.Queue) string {
	return str(func(q *api.Queue) string { return strconv.Itoa(int(get(q))) })
}

// qlimit is a limit: the number, "" for none.
func qlimit(get func(q *api.Queue) int32) func(*fieldCtx, *api.Queue) string {
	return str(func(q *api.Queue) string { return num(int64(get(q))) })
}

func qnone(*fieldCtx, *api.Queue) string { return "" }

// queueFields are bqueues -o's fields (LSF 10.1.0.2) in the order "all"
// prints them. Limits XCE does not have (core, CPU, data, file, process,
// stack, swap, thread) are always empty.
var queueFields = sync.OnceValue(func() []*fieldDef[*api.Queue] {
	return []*fieldDef[*api.Queue]{
		{name: "queue_name", aliases: []string{"qname"}, width: 15, text: qstr((*api.Queue).GetName)},
		{name: "description", aliases: []string{"desc"}, width: 50, text: qstr((*api.Queue).GetDescription)},
		{name: "priority", aliases: []string{"prio"}, width: 10, text: qcount((*api.Queue).GetPriority)},
		{name: "status", aliases: []string{"stat"}, width: 12, text: qstr(QueueStatus)},
		{name: "max", width: 10, text: qlimit((*api.Queue).GetMaxSlots)},
		{name: "jl_u", aliases: []string{"jlu"}, width: 10, text: qlimit((*api.Queue).GetUserSlotLimit)},
		{name: "jl_p", aliases: []string{"jlp"}, width: 10, text: qlimit((*api.Queue).GetProcLimit)},
		{name: "jl_h", aliases: []string{"jlh"}, width: 10, text: qlimit((*api.Queue).GetHostSlotLimit)},
		{name: "njobs", width: 10, text: qcount((*api.Queue).GetNjobs)},
		{name: "pend", width: 10, text: qcount((*api.Queue).GetPend)},
		{name: "run", width: 10, text: qcount((*api.Queue).GetRun)},
		{name: "susp", width: 10, text: qcount(func(q *api.Queue) int32 { return q.GetSsusp() + q.GetUsusp() })},
		{name: "rsv", width: 10, text: qcount((*api.Queue).GetRsv)},
		{name: "ususp", width: 10, text: qcount((*api.Queue).GetUsusp)},
		{name: "ssusp", width: 10, text: qcount((*api.Queue).GetSsusp)},
		{name: "nice", width: 6, text: qcount((*api.Queue).GetNice)},
		{name: "max_corelimit", aliases: []string{"corelimit"}, width: 8, text: qnone},
		{name: "max_cpulimit", aliases: []string{"cpulimit"}, width: 30, text: qnone},
		{name: "default_cpulimit", aliases: []string{"def_cpulimit"}, width: 30, text: qnone},
		{name: "max_datalimit", aliases: []string{"datalimit"}, width: 8, text: qnone},
		{name: "default_datalimit", aliases: []string{"def_datalimit"}, width: 8, text: qnone},
		{name: "max_filelimit", aliases: []string{"filelimit"}, width: 8, text: qnone},
		{name: "max_memlimit", aliases: []string{"memlimit"}, width: 8, kb: func(q *api.Queue) (int64, bool) {
			return q.GetMaxMemKb(), q.GetMaxMemKb() > 0
		}},
		{name: "default_memlimit", aliases: []string{"def_memlimit"}, width: 8, kb: func(q *api.Queue) (int64, bool) {
			return q.GetDefaultMemKb(), q.GetDefaultMemKb() > 0
		}},
		{name: "max_processlimit", aliases: []string{"processlimit"}, width: 8, text: qnone},
		{name: "default_processlimit", aliases: []string{"def_processlimit"}, width: 8, text: qnone},
		{name: "max_runlimit", aliases: []string{"runlimit"}, width: 12, text: qstr(func(q *api.Queue) string { return minutes(q.GetRunLimitSec()) })},
		{name: "default_runlimit", aliases: []string{"def_runlimit"}, width: 12, text: qstr(func(q *api.Queue) string { return minutes(q.GetDefaultRunLimitSec()) })},
		{name: "max_stacklimit", aliases: []string{"stacklimit"}, width: 8, text: qnone},
		{name: "max_swaplimit", aliases: []string{"swaplimit"}, width: 8, text: qnone},
		{name: "max_tasklimit", aliases: []string{"tasklimit"}, width: 6, text: qlimit((*api.Queue).GetMaxTasks)},
		{name: "min_tasklimit", width: 6, text: qlimit((*api.Queue).GetMinTasks)},
		{name: "default_tasklimit", aliases: []string{"def_tasklimit"}, width: 6, text: qlimit((*api.Queue).GetDefaultTasks)},
		{name: "max_threadlimit", aliases: []string{"threadlimit"}, width: 6, text: qnone},
		{name: "default_threadlimit", aliases: []string{"def_threadlimit"}, width: 6, text: qnone},
		{name: "res_req", width: 20, text: qstr((*api.Queue).GetResReq)},
		{name: "hosts", width: 50, text: qstr(func(q *api.Queue) string { return allIfEmpty(q.GetHosts()) })},
	}
})

var queueFieldByName = sync.OnceValue(func() map[string]*fieldDef[*api.Queue] { return indexFields(queueFields()) })

func hstr(get func(h *api.Host) string) func(*fieldCtx, *api.Host) string { return str(get) }

func hcount(get func(h *api.Host) int32) func(*fieldCtx, *api.Host) string {
	return str(func(h *api.Host) string { return strconv.Itoa(int(get(h))) })
}

func hnone(*fieldCtx, *api.Host) string { return "" }

// gpuCount counts the host's devices that match (bhosts -o ngpus_*).
func gpuCount(match func(*api.GpuDevice) bool) func(*fieldCtx, *api.Host) string {
	return str(func(h *api.Host) string {
		n := 0
		for _, g := range h.GetGpus() {
			if match(g) {
				n++
			}
		}
		return strconv.Itoa(n)
	})
}

// hostFields are bhosts -o's fields (LSF 10.1.0.2, with the GPU fields of
// later fix packs) in the order "all" prints them. XCE has no per-user
// host limit or host dispatch windows, and does not tell shared-mode
// devices held by j_exclusive jobs apart: those are empty.
var hostFields = sync.OnceValue(func() []*fieldDef[*api.Host] {
	return []*fieldDef[*api.Host]{
		{name: "host_name", aliases: []string{"hname"}, width: 20, text: hstr((*api.Host).GetName)},
		{name: "status", aliases: []string{"stat"}, width: 15, text: hstr(func(h *api.Host) string { return HostStatus(h, true) })},
		{name: "cpuf", width: 10, text: hstr(func(h *api.Host) string { return strconv.FormatFloat(h.GetCpuFactor(), 'f', 2, 64) })},
		{name: "jl_u", aliases: []string{"jlu"}, width: 8, text: hnone},
		{name: "max", width: 8, text: hstr(func(h *api.Host) string { return num(int64(h.GetMaxSlots())) })},
		{name: "njobs", width: 8, text: hcount((*api.Host).GetNjobs)},
		{name: "run", width: 8, text: hcount((*api.Host).GetRun)},
		{name: "ssusp", width: 8, text: hcount((*api.Host).GetSsusp)},
		{name: "ususp", width: 8, text: hcount((*api.Host).GetUsusp)},
		{name: "rsv", width: 8, text: hcount((*api.Host).GetRsv)},
		{name: "dispatch_window", aliases: []string{"dispwin"}, width: 50, text: hnone},
		{name: "ngpus", aliases: []string{"ng"}, width: 8, text: hcount((*api.Host).GetNgpus)},
		{name: "ngpus_alloc", aliases: []string{"ngu"}, width: 8, text: gpuCount(func(g *api.GpuDevice) bool { return len(g.GetJobIds()) > 0 })},
		{name: "ngpus_excl_alloc", aliases: []string{"ngx"}, width: 8, text: gpuCount((*api.GpuDevice).GetExclusive)},
		{name: "ngpus_shared_alloc", aliases: []string{"ngs"}, width: 8, text: gpuCount(func(g *api.GpuDevice) bool { return len(g.GetJobIds()) > 0 && !g.GetExclusive() })},
		{name: "ngpus_shared_jexcl_alloc", aliases: []string{"ngsjx"}, width: 8, text: hnone},
		{name: "ngpus_excl_avail", aliases: []string{"ngxa"}, width: 8, text: gpuCount(func(g *api.GpuDevice) bool { return len(g.GetJobIds()) == 0 })},
		{name: "ngpus_shared_avail", aliases: []string{"ngsa"}, width: 8, text: gpuCount(func(g *api.GpuDevice) bool { return !g.GetExclusive() })},
		{name: "comments", width: 30, text: hstr(func(h *api.Host) string { return strings.TrimSpace(h.GetAdminComment()) })},
	}
})

var hostFieldByName = sync.OnceValue(func() map[string]*fieldDef[*api.Host] { return indexFields(hostFields()) })
