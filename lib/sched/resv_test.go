package sched

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func rsv(id string, open bool, from, to time.Duration, hosts ...RsvHost) AdvRsv {
	return AdvRsv{ID: id, Open: open, Hosts: hosts, Windows: []Window{{t0.Add(from), t0.Add(to)}}}
}

func withRsv(j Job, id string) Job { j.Rsv = id; return j }

func TestAdvRsvActive(t *testing.T) {
	s := snapshot(hosts("a 4", "b 4"),
		withRsv(mkJob(1, "", "n=2"), "alice#0"),
		withRsv(mkJob(2, "", "n=2"), "alice#0"),
		withRsv(mkJob(3, ""), "alice#0"), // the reservation is full
		mkJob(4, "", "n=4"),              // only b's 4 slots are free
		mkJob(5, "", "n=2"),              // nothing left
	)
	s.AdvRsvs = []AdvRsv{rsv("alice#0", false, -time.Hour, time.Hour, RsvHost{"a", 4})}
	check(t, s, `
1: a*2
2: a*2
3: PEND Not enough job slot(s): 1 host | Host does not belong to the specified advance reservation: 1 host
4: b*4
5: PEND Not enough job slot(s): 2 hosts
`)
	// Unused reserved slots stay free for the reservation.
	s = snapshot(hosts("a 4"), withRsv(mkJob(1, ""), "alice#0"), mkJob(2, "", "n=2"), mkJob(3, ""))
	s.AdvRsvs = []AdvRsv{rsv("alice#0", false, -time.Hour, time.Hour, RsvHost{"a", 3})}
	check(t, s, `
1: a*1
2: PEND Not enough job slot(s): 1 free on 1 usable host, the job needs 2
3: a*1
`)
}

func TestAdvRsvInactiveAndPlanning(t *testing.T) {
	s := snapshot(hosts("a 4"),
		withRsv(mkJob(1, ""), "alice#0"), // window opens in an hour
		mkJob(2, "", "n=2"),              // no run limit: would cross into the window
		mkJob(3, "", "n=2", "W=30m"),     // ends before it opens
		mkJob(4, "", "W=30m"),
		mkJob(5, "", "W=30m"),
		mkJob(6, "", "W=30m"), // the host is full now
	)
	s.AdvRsvs = []AdvRsv{rsv("alice#0", false, time.Hour, 2*time.Hour, RsvHost{"a", 3})}
	check(t, s, `
1: PEND Job's reservation is inactive
2: PEND Not enough job slot(s): 1 free on 1 usable host, the job needs 2
3: a*2
4: a*1
5: a*1
6: PEND Not enough job slot(s): 1 host
`)
	// A long job may use the unreserved slot.
	s = snapshot(hosts("a 4"), mkJob(7, ""), mkJob(8, ""))
	s.AdvRsvs = []AdvRsv{rsv("alice#0", false, time.Hour, 2*time.Hour, RsvHost{"a", 3})}
	check(t, s, `
7: a*1
8: PEND Not enough job slot(s) while advance reservation is active: 1 host
`)
}

func TestAdvRsvClosedJobEndsWithWindow(t *testing.T) {
	// A job of closed reservation r0 is killed when r0's window closes,
	// so r1's later window on the same host does not stop it; an open
	// reservation's job runs on and must fit around r1.
	for _, open := range []bool{false, true} {
		s := snapshot(hosts("a 2"), withRsv(mkJob(1, "", "n=2"), "r0"))
		s.AdvRsvs = []AdvRsv{
			rsv("r0", open, -time.Minute, time.Hour, RsvHost{"a", 2}),
			rsv("r1", false, time.Hour, 2*time.Hour, RsvHost{"a", 2}),
		}
		want := "1: a*2"
		if open {
			want = "1: PEND Not enough job slot(s) while advance reservation is active: 1 host"
		}
		check(t, s, want)
	}
}

// TestAdvRsvSimulation drives the scheduler over long random runs with
// one-time and recurring reservations, jobs of them and other jobs with
// and without run limits, and checks at every event that no job outside a
// reservation uses its slots inside its window: on every host, the slots
// of other jobs plus the reservations' slots never exceed the host's.
// Closed reservations' jobs are killed when their window ends.
func TestAdvRsvSimulation(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { advSim(t, seed) })
	}
}

func advSim(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 7))
	nHosts, nJobs := 40, 1000
	if testing.Short() {
		nJobs = 300
	}
	var hs []Host
	for i := range nHosts {
		hs = append(hs, mkHost(fmt.Sprintf("h%02d %d", i, 2+r.IntN(7))))
	}
	// Reservations: never more slots on a host than it has at any time
	// (brsvadd's check), some recurring (a window every 6 hours).
	var rsvs []AdvRsv
	horizon := 48 * time.Hour
	reservedAt := func(h string, w Window) int {
		n := 0
		for _, rv := range rsvs {
			for _, rw := range rv.Windows {
				if rw.Start.Before(w.End) && w.Start.Before(rw.End) {
					for _, rh := range rv.Hosts {
						if rh.Host == h {
							n += rh.Slots
						}
					}
				}
			}
		}
		return n
	}
	for k := range 12 {
		start := time.Duration(r.IntN(40*60)) * time.Minute
		length := time.Duration(10+r.IntN(240)) * time.Minute
		rv := AdvRsv{ID: fmt.Sprintf("u#%d", k), Open: r.IntN(3) == 0}
		if k%4 == 0 {
			for s := start % (6 * time.Hour); s < horizon; s += 6 * time.Hour {
				rv.Windows = append(rv.Windows, Window{t0.Add(s), t0.Add(s + min(length, 5*time.Hour))})
			}
		} else {
			rv.Windows = []Window{{t0.Add(start), t0.Add(start + length)}}
		}
		for _, hi := range r.Perm(nHosts)[:1+r.IntN(5)] {
			h := hs[hi]
			free := h.MaxSlots
			for _, w := range rv.Windows {
				free = min(free, h.MaxSlots-reservedAt(h.Name, w))
			}
			if free > 0 {
				rv.Hosts = append(rv.Hosts, RsvHost{h.Name, 1 + r.IntN(free)})
			}
		}
		if len(rv.Hosts) > 0 {
			rsvs = append(rsvs, rv)
		}
	}
	type job struct {
		Job
		runs  time.Duration
		start time.Time
		hosts []HostAlloc
	}
	var arriving []*job
	for i := range nJobs {
		j := &job{runs: time.Duration(1+r.IntN(180)) * time.Minute}
		j.Key = JobKey{ID: int64(i + 1)}
		j.User, j.Queue, j.Project = "u", "normal", "default"
		j.Submit = t0.Add(time.Duration(i) * horizon / time.Duration(nJobs) * 3 / 4)
		j.MinSlots = 1 + r.IntN(3)
		switch r.IntN(4) {
		case 0: // no run limit
		case 1:
			j.Rsv = rsvs[r.IntN(len(rsvs))].ID
			j.RunLimit = j.runs + time.Duration(r.IntN(60))*time.Minute
		default:
			j.RunLimit = j.runs + time.Duration(r.IntN(60))*time.Minute
		}
		arriving = append(arriving, j)
	}
	byID := map[string]*AdvRsv{}
	var times []time.Time
	for i := range rsvs {
		byID[rsvs[i].ID] = &rsvs[i]
		for _, w := range rsvs[i].Windows {
			times = append(times, w.Start, w.End)
		}
	}
	var pending, running []*job
	now := t0
	done := 0
	checkNow := func() {
		for _, h := range hs {
			other, mine := 0, map[string]int{}
			for _, j := range running {
				for _, ha := range j.hosts {
					if ha.Host != h.Name {
						continue
					}
					if rv := byID[j.Rsv]; rv != nil && active(rv, now) {
						mine[rv.ID] += ha.Slots
					} else {
						other += ha.Slots
					}
				}
			}
			held := 0
			for i := range rsvs {
				if !active(&rsvs[i], now) {
					continue
				}
				for _, rh := range rsvs[i].Hosts {
					if rh.Host == h.Name {
						held += max(rh.Slots, mine[rsvs[i].ID])
					}
				}
			}
			if other+held > h.MaxSlots {
				t.Fatalf("%v: host %s: %d slots of other jobs + %d reserved > %d", now, h.Name, other, held, h.MaxSlots)
			}
		}
	}
	for steps := 0; done < nJobs && steps < 100000; steps++ {
		for len(arriving) > 0 && !arriving[0].Submit.After(now) {
			pending = append(pending, arriving[0])
			arriving = arriving[1:]
		}
		// Ends, and closed reservations' jobs killed at their window's end.
		running = slices.DeleteFunc(running, func(j *job) bool {
			end := j.start.Add(j.runs)
			if rv := byID[j.Rsv]; rv != nil && !rv.Open {
				for _, w := range rv.Windows {
					if !j.start.Before(w.Start) && j.start.Before(w.End) && w.End.Before(end) {
						end = w.End
					}
				}
			}
			if !end.After(now) {
				done++
				return true
			}
			return false
		})
		checkNow()
		s := &Snapshot{Now: now, Schema: testSchema, Hosts: hs, Queues: []Queue{{Name: "normal"}}, AdvRsvs: rsvs, NoReasons: true}
		for _, j := range pending {
			s.Jobs = append(s.Jobs, j.Job)
		}
		for _, j := range running {
			s.Running = append(s.Running, Alloc{Job: j.Key, User: j.User, Queue: j.Queue, Project: j.Project, Start: j.start,
				RunLimit: j.RunLimit, Hosts: j.hosts, Rsv: j.Rsv})
		}
		d := Schedule(s)
		placed := map[JobKey][]HostAlloc{}
		for _, p := range d.Placements {
			placed[p.Job] = p.Hosts
			if len(p.Victims) > 0 {
				// Planning keeps the slots free: nothing runs on them to
				// suspend (resv_susp.go).
				t.Fatalf("%v: job %v suspends %v", now, p.Job, p.Victims)
			}
		}
		pending = slices.DeleteFunc(pending, func(j *job) bool {
			if has, ok := placed[j.Key]; ok {
				j.start, j.hosts = now, has
				running = append(running, j)
				return true
			}
			return false
		})
		checkNow()
		// Next event: an arrival, an end, a window's start or end.
		next := now.Add(24 * time.Hour)
		if len(arriving) > 0 {
			next = arriving[0].Submit
		}
		for _, j := range running {
			if e := j.start.Add(j.runs); e.Before(next) {
				next = e
			}
		}
		for _, w := range times {
			if w.After(now) && w.Before(next) {
				next = w
			}
		}
		if now.After(t0.Add(horizon)) && len(running) == 0 && len(arriving) == 0 {
			// Jobs of reservations whose windows are all over pend for
			// good; the rest must have run.
			for _, j := range pending {
				if j.Rsv == "" {
					t.Fatalf("job %v without a reservation never ran", j.Key)
				}
			}
			break
		}
		now = next
	}
	if done < nJobs/2 {
		t.Errorf("only %d of %d jobs ran", done, nJobs)
	}
}

func active(r *AdvRsv, t time.Time) bool {
	return slices.ContainsFunc(r.Windows, func(w Window) bool { return !t.Before(w.Start) && t.Before(w.End) })
}
