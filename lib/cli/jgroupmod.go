package cli

// Job group administration: bgadd, bgdel and bgmod (LSF's). The
// controller keeps the groups and checks the rules (lib/controller's
// jobgroup.go); these commands send one request and print its answer.

import (
	"context"
	"fmt"
	"strconv"

	"xce/lib/api"
	"xce/lib/client"
)

// jgroupCall sends a job group request and prints its messages and
// errors.
func jgroupCall(req *api.JobGroupRequest) int {
	rc := 0
	if code := fetch(func(c *client.Client, cx context.Context) (*api.JobGroupReply, error) {
		return c.JobGroups(cx, req)
	}, func(reply *api.JobGroupReply) error {
		rc = printReply(reply.Messages, reply.Errors)
		return nil
	}); code != 0 {
		return code
	}
	return rc
}

// groupLimit reads -L's value: 0 to 2147483647.
func groupLimit(cmd, v string) (int32, bool) {
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 0 {
		fmt.Fprintf(sys.stderr, "%s: %s: The job group limit must be a number from 0 to 2147483647\n", cmd, v)
		return 0, false
	}
	return int32(n), true
}

// groupGang reads -gang's value (jobs per gang, 0 to 2147483647) and
// -gang_fail's (requeue or kill) into req when given.
func groupGang(cmd string, flags interface{ Changed(string) bool }, gang, fail string, req *api.JobGroupRequest) bool {
	if flags.Changed("gang") {
		n, err := strconv.ParseInt(gang, 10, 32)
		if err != nil || n < 0 {
			fmt.Fprintf(sys.stderr, "%s: %s: The gang size must be a number from 0 to 2147483647\n", cmd, gang)
			return false
		}
		req.GangSet, req.Gang = true, int32(n)
	}
	if flags.Changed("gang_fail") {
		if fail != "requeue" && fail != "kill" {
			fmt.Fprintf(sys.stderr, "%s: %s: -gang_fail takes requeue or kill\n", cmd, fail)
			return false
		}
		req.GangFail = fail
	}
	return true
}

// bgadd creates a job group and its missing parents.
func bgadd(args []string) int {
	var limit, gang, gangFail string
	var names []string
	cmd, code := newCommand("bgadd [-L limit] [-gang N [-gang_fail requeue|kill]] job_group_name", "Create job groups", func(a []string) int {
		names = a
		return 0
	})
	cmd.Flags().StringVar(&limit, "L", "", "the most started jobs (RUN, SSUSP, USUSP) of the group and its subgroups")
	cmd.Flags().StringVar(&gang, "gang", "", "a gang group: its pending jobs start N at a time, all together or none")
	cmd.Flags().StringVar(&gangFail, "gang_fail", "", "when a gang member fails to start or its host fails: requeue (default) or kill the others")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	if len(names) != 1 {
		fmt.Fprintln(sys.stderr, "Usage: "+cmd.Use)
		return 255
	}
	req := &api.JobGroupRequest{Op: api.JobGroupRequest_ADD, Path: names[0]}
	if cmd.Flags().Changed("L") {
		n, ok := groupLimit("bgadd", limit)
		if !ok {
			return 255
		}
		req.Limited, req.Limit = true, n
	}
	if !groupGang("bgadd", cmd.Flags(), gang, gangFail, req) {
		return 255
	}
	return jgroupCall(req)
}

// bgmod changes a job group's limit (-L) or removes it (-Ln), and its
// gang size (-gang N; 0: no longer a gang) and -gang_fail.
func bgmod(args []string) int {
	var limit, gang, gangFail string
	var none bool
	var names []string
	cmd, code := newCommand("bgmod [-L limit | -Ln] [-gang N] [-gang_fail requeue|kill] job_group_name", "Modify job groups", func(a []string) int {
		names = a
		return 0
	})
	cmd.Flags().StringVar(&limit, "L", "", "the group's new limit of started jobs")
	cmd.Flags().BoolVar(&none, "Ln", false, "remove the group's limit")
	cmd.Flags().StringVar(&gang, "gang", "", "the group's new gang size (0: no longer a gang group)")
	cmd.Flags().StringVar(&gangFail, "gang_fail", "", "when a gang member fails to start or its host fails: requeue or kill the others")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	set := cmd.Flags().Changed("L")
	gangOpt := cmd.Flags().Changed("gang") || cmd.Flags().Changed("gang_fail")
	if len(names) != 1 || set && none || !set && !none && !gangOpt {
		fmt.Fprintln(sys.stderr, "Usage: "+cmd.Use)
		return 255
	}
	req := &api.JobGroupRequest{Op: api.JobGroupRequest_MODIFY, Path: names[0], LimitSet: set || none}
	if !groupGang("bgmod", cmd.Flags(), gang, gangFail, req) {
		return 255
	}
	if set {
		n, ok := groupLimit("bgmod", limit)
		if !ok {
			return 255
		}
		req.Limited, req.Limit = true, n
	}
	return jgroupCall(req)
}

// bgdel deletes a job group and its subgroups once they have no
// unfinished job; "0" (or no name) deletes the caller's empty groups, and
// -u user|all another user's or everyone's (administrators).
func bgdel(args []string) int {
	var user string
	var names []string
	cmd, code := newCommand("bgdel [-u user_name | -u all] job_group_name | 0", "Delete job groups", func(a []string) int {
		names = a
		return 0
	})
	cmd.Flags().StringVar(&user, "u", "", "with 0 or no group: the empty groups of this user, or of all users")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	if len(names) > 1 || len(names) == 0 && user == "" {
		fmt.Fprintln(sys.stderr, "Usage: "+cmd.Use)
		return 255
	}
	req := &api.JobGroupRequest{Op: api.JobGroupRequest_DELETE, User: user}
	if len(names) == 1 {
		req.Path = names[0]
		if names[0] != "0" {
			req.User = "" // LSF: -u is ignored with a group name
		}
	}
	return jgroupCall(req)
}
