package cli

// bclaim: standalone claims (XCE's; no LSF command to follow). A claim
// holds resources (rusage[]'s instances and amounts) on one host for
// the jobs that name it (bsub -claim); the controller allocates it like
// a job (lib/controller's claim.go, lib/sched's claim.go).

import (
	"context"
	"fmt"
	"strings"
	"time"

	"xce/lib/api"
	"xce/lib/client"
	"xce/lib/lsfout"
)

func bclaim(args []string) int {
	var long, excl bool
	var resReq, hosts, users, group, end string
	var words []string
	cmd, code := newCommand(`bclaim create claim_name -R "rusage[...]" [-m "host_name ..."] [-u "user_name ..." | -g user_group] [-e end_time] [-x]
bclaim list [-l] [claim_name ...]
bclaim delete claim_name ...`, "Create, list and delete standalone claims", func(a []string) int {
		words = a
		return 0
	})
	fs := cmd.Flags()
	fs.StringVar(&resReq, "R", "", `create: what the claim holds, "rusage[name=amount:...]"`)
	fs.StringVar(&hosts, "m", "", "create: candidate hosts or host groups, in order")
	fs.StringVar(&users, "u", "", "create: users who may use the claim (its creator always may)")
	fs.StringVar(&group, "g", "", "create: a user group whose members may use the claim")
	fs.StringVar(&end, "e", "", "create: end time, [[year:][month:]day:]hour:minute or an ISO 8601 time: the claim is deleted then")
	fs.BoolVar(&excl, "x", false, "create: the jobs of one user at a time")
	fs.BoolVar(&long, "l", false, "list: long format")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	if len(words) == 0 {
		fmt.Fprintln(sys.stderr, "bclaim: create, list or delete must be specified")
		return 255
	}
	op, names := words[0], words[1:]
	createOnly := resReq != "" || hosts != "" || users != "" || group != "" || end != "" || excl
	switch op {
	case "create":
		if long || len(names) != 1 {
			fmt.Fprintln(sys.stderr, "bclaim create: one claim name must be specified (and no -l)")
			return 255
		}
		ci := &api.ClaimInfo{Name: names[0], ResReq: resReq, Hosts: strings.Fields(hosts), Users: strings.Fields(strings.ReplaceAll(users, ",", " ")),
			Group: group, Exclusive: excl}
		if end != "" {
			t, err := parseRsvTime(end, time.Now())
			if err != nil {
				fmt.Fprintf(sys.stderr, "%s: Bad time specification\n", end)
				return 255
			}
			ci.End = t.Unix()
		}
		return claimCall(&api.ClaimRequest{Op: api.ClaimRequest_CREATE, Claim: ci}, nil)
	case "delete":
		if long || createOnly || len(names) == 0 {
			fmt.Fprintln(sys.stderr, "bclaim delete: claim names must be specified (and no options)")
			return 255
		}
		return claimCall(&api.ClaimRequest{Op: api.ClaimRequest_DELETE, Names: names}, nil)
	case "list":
		if createOnly {
			fmt.Fprintln(sys.stderr, "bclaim list: only -l may be given")
			return 255
		}
		return claimCall(&api.ClaimRequest{Op: api.ClaimRequest_LIST, Names: names}, func(r *api.ClaimReply) error {
			if len(r.Claims) == 0 && len(r.Errors) > 0 {
				return nil
			}
			return lsfout.WriteClaims(sys.stdout, r.Claims, long, time.Local)
		})
	}
	fmt.Fprintf(sys.stderr, "bclaim: %s: not create, list or delete\n", op)
	return 255
}

// claimCall sends a claim request, shows its claims (show, for list),
// and prints its messages and errors.
func claimCall(req *api.ClaimRequest, show func(*api.ClaimReply) error) int {
	rc := 0
	if code := fetch(func(c *client.Client, cx context.Context) (*api.ClaimReply, error) {
		return c.Claims(cx, req)
	}, func(reply *api.ClaimReply) error {
		if show != nil {
			if err := show(reply); err != nil {
				return err
			}
		}
		rc = printReply(reply.Messages, reply.Errors)
		return nil
	}); code != 0 {
		return code
	}
	return rc
}
