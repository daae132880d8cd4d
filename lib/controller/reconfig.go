package controller

import (
	"fmt"
	"log/slog"
	"sort"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/resreq"
	"xce/lib/store"
)

// LostAndFound is the queue that holds the jobs whose queue disappeared
// from the configuration. It takes no submissions and dispatches nothing:
// its jobs wait until an administrator switches them to a real queue.
const LostAndFound = "lost_and_found"

const reasonLost = "The job's queue was removed from the configuration; it waits in lost_and_found until it is switched to another queue"

// Reconfig reloads the configuration file (badmin reconfig, SIGHUP). A
// configuration with an error is refused whole and the old one stays.
// Jobs whose queue is gone move to lost_and_found; pending jobs are layered
// again against the new configuration (one the new configuration would
// refuse keeps what it had: it was accepted, and the administrator decides);
// running jobs keep what they started with.
func (c *Controller) Reconfig(who Caller, checkOnly bool) ([]string, error) {
	if !c.isAdmin(who.UID) {
		return nil, &UserError{Msg: "Operation denied by MBD: User permission denied", Permission: true}
	}
	file := c.cfg.ClusterFile
	if file == "" {
		return []string{"xced runs the built-in single-host configuration; there is no file to read again"}, nil
	}
	conf, err := config.Load(file)
	if err != nil {
		return nil, &UserError{Msg: err.Error()}
	}
	if checkOnly {
		return nil, nil
	}
	if r := c.cfg.Replication; r != nil {
		if (len(conf.Cluster.Controllers) == 0) != (len(c.config().Cluster.Controllers) == 0) {
			return nil, &UserError{Msg: "cluster.controllers: a controller becomes highly available, or stops being so, only by a restart of its candidates"}
		}
		// The candidates first: a list the cluster cannot take (removing
		// the leader itself) leaves the old configuration in force.
		if err := r.SetCandidates(conf.Cluster.Controllers); err != nil {
			return nil, &UserError{Msg: "cluster.controllers: " + err.Error()}
		}
	}
	notes, err := c.apply(conf)
	if err == nil {
		c.restartElims()
	}
	return notes, err
}

// apply swaps in a validated configuration.
func (c *Controller) apply(conf *config.Config) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var notes []string
	queues := map[string]*queue{}
	for _, q := range conf.APIQueues() {
		if old := c.queues[q.Name]; old != nil {
			// An administrator's qclose / qinact outlives a reconfiguration.
			q.Open, q.Active = old.q.Open, old.q.Active
		} else {
			notes = append(notes, fmt.Sprintf("Queue <%s> added", q.Name))
		}
		queues[q.Name] = &queue{q: q}
	}
	for name := range c.queues {
		if queues[name] == nil && name != LostAndFound {
			notes = append(notes, fmt.Sprintf("Queue <%s> removed", name))
		}
	}

	// Group the unfinished jobs by job id: an array's elements share their
	// effective spec.
	ids := map[int64][]*rec{}
	for _, r := range c.jobs {
		if !isFinished(r.job.State) {
			ids[r.job.JobId] = append(ids[r.job.JobId], r)
		}
	}
	order := make([]int64, 0, len(ids))
	for id := range ids {
		order = append(order, id)
	}
	sort.Slice(order, func(a, b int) bool { return order[a] < order[b] })

	var changes []store.Change
	lost, relayered, kept := 0, 0, 0
	for _, id := range order {
		recs := ids[id]
		eff := recs[0].eff
		if eff.GetQueue() == LostAndFound {
			continue
		}
		var newEff *api.JobSpec
		event := api.EventType_MODIFY
		var detail string
		if queues[eff.GetQueue()] == nil {
			spec, err := eff.Spec()
			if err != nil {
				return nil, err
			}
			spec.Queue = LostAndFound
			// Its other values keep their origins; the queue gets a new one.
			spec.Origin = c.origin(id)
			spec.Origin["queue"] = "lost_and_found (queue " + eff.GetQueue() + " removed)"
			newEff = spec
			detail = "Switched to Queue <" + LostAndFound + ">"
			lost += len(recs)
		} else if allPending(recs) {
			spec, _, err := c.store.Spec(id)
			if err == nil {
				spec.Env, err = c.store.Env(spec.EnvRef)
			}
			if err != nil {
				return nil, fmt.Errorf("job %d: %w", id, err)
			}
			spec.Uid, spec.User = eff.GetUid(), eff.GetUser()
			_, eff2, err := c.layerWith(conf, spec)
			if err != nil {
				kept += len(recs)
				continue
			}
			// Unchanged when the values and their origins are the same.
			old, _ := eff.Spec()
			if old != nil {
				old.Origin = c.origin(id)
				if proto.Equal(stripForCompare(old), stripForCompare(eff2)) {
					continue
				}
			}
			newEff = eff2
			detail = "Parameters of Job are changed: layered again after reconfiguration"
			relayered += len(recs)
		} else {
			continue // running jobs keep what they started with
		}
		origin := splitOrigin(newEff)
		raw, err := proto.Marshal(newEff)
		if err != nil {
			return nil, err
		}
		for i, r := range recs {
			nj := c.clone(r)
			ch := store.Change{Job: nj, Event: c.event(nj, event, "", detail)}
			if i == 0 {
				ch.EffectiveRaw, ch.OriginRaw = raw, origin
			}
			changes = append(changes, ch)
		}
	}
	if lost > 0 {
		queues[LostAndFound] = &queue{q: &api.Queue{
			Name:         LostAndFound,
			Description:  "Jobs whose queue was removed from the configuration; switch them to another queue.",
			LostAndFound: true,
		}}
	} else if old := c.queues[LostAndFound]; old != nil {
		queues[LostAndFound] = old
	}
	if err := c.commit(changes); err != nil {
		return nil, fmt.Errorf("record the reconfiguration: %w", err)
	}
	c.queues = queues
	c.conf.Store(conf)
	c.configuredHosts(conf)
	c.reqs = map[string]*resreq.ResReq{} // the resources may have changed
	c.dirty = true
	if lost > 0 {
		notes = append(notes, fmt.Sprintf("%d job(s) moved to queue <%s>", lost, LostAndFound))
	}
	if relayered > 0 {
		notes = append(notes, fmt.Sprintf("%d pending job(s) layered again", relayered))
	}
	if kept > 0 {
		notes = append(notes, fmt.Sprintf("%d pending job(s) the new configuration would refuse keep their settings", kept))
	}
	slog.Info("reconfigured", "file", conf.File, "changes", notes)
	c.kickLocked()
	return notes, nil
}

func allPending(recs []*rec) bool {
	for _, r := range recs {
		if r.job.State != api.JobState_PEND && r.job.State != api.JobState_PSUSP {
			return false
		}
	}
	return true
}

// stripForCompare drops what layering fills identically from both sides.
func stripForCompare(s *api.JobSpec) *api.JobSpec {
	c := proto.Clone(s).(*api.JobSpec)
	c.Env = nil
	return c
}

// origin reads where a job's effective values came from (never nil).
func (c *Controller) origin(id int64) map[string]string {
	out := map[string]string{}
	raw, err := c.store.OriginRaw(id)
	if err != nil || raw == nil {
		return out
	}
	o := &api.JobSpec{}
	if proto.Unmarshal(raw, o) == nil && o.Origin != nil {
		out = o.Origin
	}
	return out
}

// kickLocked asks for a cycle; safe with c.mu held.
func (c *Controller) kickLocked() { c.Kick() }
