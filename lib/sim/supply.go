package sim

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"xce/lib/config"
	"xce/lib/resreq"
	"xce/lib/sched"
)

// DefaultBootTime is a template's boot delay in the simulator when its
// sim_boot_time is not set.
const DefaultBootTime = 2 * time.Minute

// TemplateResult is what one template's instances did in a run.
type TemplateResult struct {
	Name  string
	Max   int
	Price float64
	// Started counts the instances requested.
	Started int
	// Life is the instances' time summed, each from its request (the
	// provider bills the boot) to its return or the end of the run.
	Life time.Duration
}

// Hours is the instance-hours.
func (t *TemplateResult) Hours() float64 { return t.Life.Hours() }

// Cost is the price times the instance-hours.
func (t *TemplateResult) Cost() float64 { return t.Price * t.Hours() }

// supply is the simulated provisioner: after each cycle the demand that
// the live controller computes (sched.ComputeDemand) requests instances,
// which join as hosts after their template's boot delay, run jobs like
// any host, and go back after idle_time without jobs, or once empty past
// max_ttl, as the live provisioner returns them.
type supply struct {
	tmpls  []*simTmpl
	byHost map[int]*simInst // snapshot host index -> its instance slot
}

type simTmpl struct {
	conf            *config.Template
	st              sched.Template // Host and Queues; counts filled per cycle
	boot, idle, ttl int64
	insts           []*simInst // max of them, one host each
	res             *TemplateResult
}

type instState uint8

const (
	instFree instState = iota // no instance
	instBooting
	instUp
)

type simInst struct {
	t         *simTmpl
	host      int // index in the snapshot's hosts
	name      string
	state     instState
	closed    bool // past max_ttl: no new jobs, returned once empty
	requested int64
	joinAt    int64
	busy      int // jobs on it
	used      int // slots its jobs hold
	idleSince int64
}

// supplyInit adds every template's instances as hosts that are not
// there yet (unavailable) and returns the slots they could add.
func (e *eng) supplyInit() int {
	if len(e.conf.Templates) == 0 {
		return 0
	}
	s := &supply{byHost: map[int]*simInst{}}
	schema := e.conf.Schema()
	extra := 0
	for _, name := range slices.Sorted(maps.Keys(e.conf.Templates)) {
		ct := e.conf.Templates[name]
		slots := max(ct.Slots, 1)
		boot := time.Duration(ct.SimBootTime) * time.Second
		if boot == 0 {
			boot = DefaultBootTime
		}
		if bt := time.Duration(ct.BootTimeout) * time.Second; bt > 0 && boot > bt {
			e.warn("boot "+name, fmt.Sprintf("template %s: sim_boot_time %v is past its boot_timeout %v; the simulated instances join all the same", name, boot, bt))
		}
		idle := ct.IdleTime
		if idle == 0 {
			idle = config.DefaultIdleTime
		}
		t := &simTmpl{conf: ct, boot: int64(boot),
			idle: int64(time.Duration(idle) * time.Second),
			ttl:  int64(time.Duration(ct.MaxTTL) * time.Second),
			res:  &TemplateResult{Name: name, Max: ct.Max, Price: ct.Price}}
		t.st = sched.Template{Name: name, Host: sched.Host{Name: name, MaxSlots: slots, Values: e.templateValues(schema, ct, name), GPUs: gpus(ct.GPUs)}}
		for _, qn := range e.conf.QueueNames() {
			if e.conf.Queues[qn].AllowsTemplate(ct) {
				t.st.Queues = append(t.st.Queues, qn)
			}
		}
		w := len(fmt.Sprint(ct.Max))
		for i := range ct.Max {
			in := &simInst{t: t, host: len(e.snap.Hosts), name: fmt.Sprintf("%s-%0*d", name, w, i+1)}
			e.hostIdx[in.name] = in.host
			e.snap.Hosts = append(e.snap.Hosts, sched.Host{Name: in.name, Status: sched.HostUnavail, MaxSlots: slots,
				Values: e.templateValues(schema, ct, in.name), GPUs: gpus(ct.GPUs)})
			s.byHost[in.host] = in
			t.insts = append(t.insts, in)
			extra += slots
		}
		s.tmpls = append(s.tmpls, t)
		e.res.Templates = append(e.res.Templates, t.res)
	}
	e.sup = s
	return extra
}

func gpus(n int) []sched.GPU {
	var out []sched.GPU
	for i := range n {
		out = append(out, sched.GPU{Index: i})
	}
	return out
}

// templateValues is an instance's resources: a simulated host's, with
// the template's slots, memory, type, model and resources.
func (e *eng) templateValues(schema *resreq.Schema, t *config.Template, name string) *resreq.Host {
	v := schema.NewHost()
	set := func(n string, x any) {
		if i, ok := x.(int64); ok {
			x = float64(i)
		}
		_ = schema.Set(v, n, x) // a resource the schema lacks is not there
	}
	mem := float64(bigMem)
	if t.Mem > 0 {
		mem = float64(t.Mem) / 1024
	}
	for _, n := range []string{"swp", "maxswp", "tmp", "maxtmp"} {
		set(n, float64(bigMem))
	}
	set("mem", mem)
	set("maxmem", mem)
	set("ncpus", float64(max(t.Slots, 1)))
	for _, n := range []string{"ut", "r15s", "r1m", "r15m"} {
		set(n, 0.0)
	}
	set("cpuf", 1.0)
	set("type", e.local.Type)
	set("model", e.local.Model)
	if t.Type != "" {
		set("type", t.Type)
	}
	if t.Model != "" {
		set("model", t.Model)
	}
	set("hname", name)
	for _, n := range slices.Sorted(maps.Keys(t.Resources)) {
		set(n, t.Resources[n])
	}
	if t.GPUs > 0 {
		set("ngpus_physical", float64(t.GPUs))
	}
	return v
}

// demand requests the instances the cycle's pending jobs need, as the
// live controller's supplyDemand does with the same computation.
func (e *eng) demand(d *sched.Decision, now int64) {
	ts := make([]sched.Template, len(e.sup.tmpls))
	for i, t := range e.sup.tmpls {
		st := t.st
		exists := 0
		for _, in := range t.insts {
			switch in.state {
			case instBooting:
				st.Booting++
				exists++
			case instUp:
				exists++
			}
		}
		st.Free = t.conf.Max - exists
		ts[i] = st
	}
	dm := sched.ComputeDemand(&e.snap, d, ts)
	for _, t := range e.sup.tmpls {
		n := dm.Hosts[t.st.Name]
		for _, in := range t.insts {
			if n == 0 {
				break
			}
			if in.state != instFree {
				continue
			}
			*in = simInst{t: t, host: in.host, name: in.name, state: instBooting, requested: now, joinAt: now + t.boot}
			t.res.Started++
			n--
		}
	}
}

// full reports whether every template has all its instances: demand can
// add no host, so a cycle that cannot place a job on the hosts there are
// may be skipped as without templates.
func (s *supply) full() bool {
	for _, t := range s.tmpls {
		for _, in := range t.insts {
			if in.state == instFree {
				return false
			}
		}
	}
	return true
}

// supplyNext is the time of the next instance event after now: a join,
// an idle instance's return, or max_ttl closing one.
func (e *eng) supplyNext() int64 {
	next := int64(1<<63 - 1)
	for _, t := range e.sup.tmpls {
		for _, in := range t.insts {
			switch in.state {
			case instBooting:
				next = min(next, in.joinAt)
			case instUp:
				if in.busy == 0 {
					next = min(next, in.idleSince+t.idle)
				}
				if t.ttl > 0 && !in.closed {
					next = min(next, in.requested+t.ttl)
				}
			}
		}
	}
	return next
}

// supplyStep makes the instance events due at now happen; it reports
// whether a host joined (a cycle may place more).
func (e *eng) supplyStep(now int64) bool {
	joined := false
	for _, t := range e.sup.tmpls {
		for _, in := range t.insts {
			h := &e.snap.Hosts[in.host]
			if in.state == instBooting && in.joinAt <= now {
				in.state, in.idleSince = instUp, now
				h.Status = sched.HostOK
				e.free += h.MaxSlots
				joined = true
			}
			if in.state != instUp {
				continue
			}
			if t.ttl > 0 && !in.closed && in.requested+t.ttl <= now {
				in.closed = true
				h.Status = sched.HostClosed
				e.free -= h.MaxSlots - in.used // no longer usable
			}
			if in.busy == 0 && (in.closed || in.idleSince+t.idle <= now) {
				t.res.Life += time.Duration(now - in.requested)
				if !in.closed {
					e.free -= h.MaxSlots
				}
				*in = simInst{t: t, host: in.host, name: in.name}
				h.Status = sched.HostUnavail
			}
		}
		// -m TEMPLATE names its joined instances, as in the controller.
		var members []string
		for _, in := range t.insts {
			if in.state == instUp {
				members = append(members, in.name)
			}
		}
		if e.snap.HostGroups == nil {
			e.snap.HostGroups = map[string][]string{}
		}
		e.snap.HostGroups[t.st.Name] = members
	}
	return joined
}

// supplyUse counts a job starting (+1) or ending (-1) on the instances
// among its hosts.
func (e *eng) supplyUse(hosts []sched.HostAlloc, delta int, now int64) {
	for _, h := range hosts {
		in := e.sup.byHost[e.hostIdx[h.Host]]
		if in == nil {
			continue
		}
		in.busy += delta
		in.used += delta * h.Slots
		if in.closed && delta < 0 {
			e.free -= h.Slots // end() counted them free; a closed host's are not
		}
		if in.busy == 0 {
			in.idleSince = now
		}
	}
}

// supplyEnd counts the instances still there at the end of the run up
// to its clock.
func (e *eng) supplyEnd(now int64) {
	for _, t := range e.sup.tmpls {
		for _, in := range t.insts {
			if in.state != instFree {
				t.res.Life += time.Duration(now - in.requested)
			}
		}
	}
}
