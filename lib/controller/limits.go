package controller

import (
	"strings"
	"time"

	"xce/lib/api"
	"xce/lib/sched"
)

// Limits is blimits: the configured limits (-c) and, from a snapshot of
// the running and suspended jobs, what they hold of each, counted as the
// scheduler counts them.
func (c *Controller) Limits() *api.LimitsReply {
	c.mu.Lock()
	conf := c.config()
	snap := c.snapshot(time.Now(), nil)
	c.mu.Unlock()
	reply := &api.LimitsReply{}
	for _, l := range conf.Limits {
		lc := &api.LimitConfig{
			Name: l.Name, Users: l.Users, PerUser: l.PerUser, Queues: l.Queues, PerQueue: l.PerQueue,
			Hosts: l.Hosts, PerHost: l.PerHost, Projects: l.Projects, PerProject: l.PerProject,
			Apps: l.Apps, PerApp: l.PerApp, LicProjects: l.LicProjects, PerLicProject: l.PerLicProject,
			SlotsPerProcessor: l.SlotsPerProcessor, Resources: l.Resources,
		}
		if l.Slots != nil {
			n := int32(*l.Slots)
			lc.Slots = &n
		}
		if l.Jobs != nil {
			n := int32(*l.Jobs)
			lc.Jobs = &n
		}
		for r, a := range l.Amounts {
			switch r {
			case "mem":
				lc.Mem = a.String()
			case "swp":
				lc.Swp = a.String()
			case "tmp":
				lc.Tmp = a.String()
			}
		}
		reply.Configs = append(reply.Configs, lc)
	}
	for _, u := range sched.LimitUsage(snap) {
		if u.Limit >= len(conf.Limits) {
			continue // a project quota, not a [[limits]] entry
		}
		l := conf.Limits[u.Limit]
		row := &api.LimitUsage{
			Name:        l.Name,
			Users:       member(u.User, l.PerUser, l.Users),
			Queues:      member(u.Queue, l.PerQueue, l.Queues),
			Hosts:       member(u.Host, l.PerHost, l.Hosts),
			Projects:    member(u.Project, l.PerProject, l.Projects),
			Apps:        member(u.App, l.PerApp, l.Apps),
			LicProjects: member(u.LicProject, l.PerLicProject, l.LicProjects),
		}
		if l.Slots != nil || l.SlotsPerProcessor > 0 {
			row.Amounts = append(row.Amounts, &api.LimitAmount{Resource: "slots", Used: u.Slots, Limit: float64(max(u.SlotLimit, 0))})
		}
		for _, r := range []string{"mem", "tmp", "swp"} {
			if _, ok := l.Amounts[r]; ok {
				row.Amounts = append(row.Amounts, &api.LimitAmount{Resource: r, Used: u.Res[r], Limit: u.ResLimit[r]})
			}
		}
		if l.Jobs != nil {
			row.Amounts = append(row.Amounts, &api.LimitAmount{Resource: "jobs", Used: float64(u.Jobs), Limit: float64(*l.Jobs)})
		}
		for r, v := range l.Resources {
			row.Amounts = append(row.Amounts, &api.LimitAmount{Resource: r, Used: u.Res[r], Limit: v})
		}
		reply.Usage = append(reply.Usage, row)
	}
	return reply
}

// member is a blimits consumer column: the member a per list counted,
// else the limit's list.
func member(v string, per, list []string) string {
	if len(per) > 0 {
		return v
	}
	return strings.Join(list, " ")
}
