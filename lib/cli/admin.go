package cli

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"xce/lib/api"
	"xce/lib/lsfout"
	"xce/lib/rpcstatus"
)

// badmin is the administrator's command: reconfig and ckconfig, the
// queue and host controls, and showstatus (which anyone may run). A queue
// control without a queue acts on the default queue, a host control
// without a host on the local host, as LSF's do; a failed queue control
// says "queue: reason" (OpenLava's lsb_perror(queue)).
func badmin(args []string) int {
	var verbose, force, asJSON bool
	var comment string
	var words []string
	cmd, code := newCommand("badmin reconfig [-v] [-f] | ckconfig [-v] | showconf mbd | showconf sbd [host ... | all] | showstatus | mbdrestart | qclose|qopen|qact|qinact [-C comment] [queue ... | all] | hclose|hopen [-C comment] [host ... | all] | hdrain|hdecommission host ... | rc view | rc error | perfmon start [sample_period] | perfmon view [-json] | perfmon stop | perfmon setperiod sample_period",
		"Administer the cluster", func(a []string) int {
			words = a
			return 0
		})
	cmd.Flags().BoolVar(&verbose, "v", false, "say what changed")
	cmd.Flags().BoolVar(&force, "f", false, "do not ask before reconfiguring (XCE never asks)")
	cmd.Flags().StringVar(&comment, "C", "", "a comment kept with a host or queue control")
	setArgName(cmd.Flags(), "C", "comment")
	cmd.Flags().BoolVar(&asJSON, "json", false, "perfmon view: JSON output")
	// The subcommands, for the shell completions (tools/genman).
	cmd.ValidArgs = []string{"ckconfig", "hclose", "hdecommission", "hdrain", "hopen", "mbdrestart", "perfmon", "qact", "qclose", "qinact", "qopen", "rc", "reconfig", "showconf", "showstatus"}
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	if len(words) == 0 {
		fmt.Fprintf(sys.stderr, "Usage: %s\n", cmd.Use)
		return 255
	}
	sub, names := words[0], words[1:]
	switch sub {
	case "reconfig", "ckconfig":
		if len(names) > 0 {
			fmt.Fprintf(sys.stderr, "Usage: %s\n", cmd.Use)
			return 255
		}
		return reconfig(sub == "ckconfig", verbose)
	case "showconf":
		return showConf("badmin", names, "badmin showconf mbd | showconf sbd [host_name ... | all]")
	case "showstatus":
		if len(names) > 0 {
			fmt.Fprintf(sys.stderr, "Usage: %s\n", cmd.Use)
			return 255
		}
		return showStatus()
	case "perfmon":
		return perfmonCmd(names, asJSON)
	case "rc":
		return rcCmd(names)
	case "mbdrestart":
		if len(names) > 0 {
			fmt.Fprintf(sys.stderr, "Usage: %s\n", cmd.Use)
			return 255
		}
		return mbdRestart()
	}
	action, ok := adminActions[sub]
	if !ok {
		fmt.Fprintf(sys.stderr, "%s: Invalid command\nUsage: %s\n", sub, cmd.Use)
		return 255
	}
	c, cx, done, ok := connect()
	if !ok {
		return 255
	}
	defer done()
	hostAction := action == api.ControlRequest_HOST_CLOSE || action == api.ControlRequest_HOST_OPEN
	if action == api.ControlRequest_HOST_DRAIN || action == api.ControlRequest_HOST_DECOMMISSION {
		if len(names) == 0 {
			fmt.Fprintf(sys.stderr, "%s: name the hosts\nUsage: %s\n", sub, cmd.Use)
			return 255
		}
		hostAction = true
	}
	switch {
	case len(names) == 0 && hostAction:
		// No host: the local host, as LSF assumes.
		h, err := os.Hostname()
		if err != nil {
			fmt.Fprintf(sys.stderr, "%s: cannot tell the local host: %v\n", sub, err)
			return 255
		}
		names = []string{strings.SplitN(h, ".", 2)[0]}
	case len(names) == 0:
		// No queue: the default queue, as LSF assumes.
		info, err := c.Info(cx, &api.ClusterInfoRequest{})
		if err != nil {
			fmt.Fprintln(sys.stderr, rpcError(c, err))
			return 255
		}
		names = []string{info.DefaultQueue}
	case !hostAction && len(names) == 1 && names[0] == "all":
		qs, err := c.ListQueues(cx, &api.ListQueuesRequest{})
		if err != nil {
			fmt.Fprintln(sys.stderr, rpcError(c, err))
			return 255
		}
		names = names[:0]
		for _, q := range qs.Queues {
			names = append(names, q.Name)
		}
	}
	reply, err := c.Control(cx, &api.ControlRequest{Action: action, Names: names, Comment: comment})
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	failed := false
	for _, r := range reply.Results {
		switch action {
		case api.ControlRequest_HOST_CLOSE, api.ControlRequest_HOST_OPEN, api.ControlRequest_HOST_DRAIN, api.ControlRequest_HOST_DECOMMISSION:
			verb := map[api.ControlRequest_Action]string{api.ControlRequest_HOST_CLOSE: "Close", api.ControlRequest_HOST_OPEN: "Open",
				api.ControlRequest_HOST_DRAIN: "Drain", api.ControlRequest_HOST_DECOMMISSION: "Decommission"}[action]
			if r.Error != "" {
				fmt.Fprintf(sys.stderr, "%s <%s> ...... %s\n", verb, r.Name, r.Error)
				failed = true
			} else {
				fmt.Fprintf(sys.stdout, "%s <%s> ...... done\n", verb, r.Name)
			}
		default:
			if r.Error != "" {
				fmt.Fprintf(sys.stderr, "%s: %s\n", r.Name, r.Error)
				failed = true
			} else {
				fmt.Fprintf(sys.stdout, "Queue <%s> is %s\n", r.Name, queueVerbs[action])
			}
		}
	}
	if failed {
		return 255
	}
	return 0
}

var adminActions = map[string]api.ControlRequest_Action{
	"qclose": api.ControlRequest_QUEUE_CLOSE,
	"qopen":  api.ControlRequest_QUEUE_OPEN,
	"qinact": api.ControlRequest_QUEUE_INACTIVATE,
	"qact":   api.ControlRequest_QUEUE_ACTIVATE,
	"hclose": api.ControlRequest_HOST_CLOSE,
	"hopen":  api.ControlRequest_HOST_OPEN,
	// Hosts on demand (issue 32): no new jobs, then returned or reported
	// drained once empty; a drained static host leaves the cluster.
	"hdrain":        api.ControlRequest_HOST_DRAIN,
	"hdecommission": api.ControlRequest_HOST_DECOMMISSION,
}

var queueVerbs = map[api.ControlRequest_Action]string{
	api.ControlRequest_QUEUE_CLOSE:      "closed",
	api.ControlRequest_QUEUE_OPEN:       "opened",
	api.ControlRequest_QUEUE_INACTIVATE: "inactivated",
	api.ControlRequest_QUEUE_ACTIVATE:   "activated",
}

// reconfig is badmin reconfig / ckconfig.
func reconfig(check, verbose bool) int {
	c, cx, done, ok := connect()
	if !ok {
		return 255
	}
	defer done()
	fmt.Fprintln(sys.stdout, "\nChecking configuration files ...")
	reply, err := c.Reconfig(cx, &api.ReconfigRequest{CheckOnly: check})
	if err != nil {
		if st, _ := rpcstatus.FromError(err); st.Code() == rpcstatus.PermissionDenied {
			fmt.Fprintln(sys.stderr, st.Message())
			return 255
		}
		fmt.Fprintln(sys.stdout, "There are fatal errors.")
		fmt.Fprintln(sys.stdout)
		fmt.Fprintln(sys.stdout, rpcError(c, err))
		if !check {
			fmt.Fprintln(sys.stdout, "\nThe configuration was not changed.")
		}
		return 255
	}
	fmt.Fprintln(sys.stdout, "No errors found.")
	if check {
		return 0
	}
	fmt.Fprintln(sys.stdout, "\nReconfiguration initiated")
	if verbose {
		for _, ch := range reply.Changes {
			fmt.Fprintln(sys.stdout, ch)
		}
	}
	return 0
}

// mbdRestart is badmin mbdrestart: with controller candidates, the
// leader hands its office to another, which restores the state from its
// own copy of the store; running jobs keep running.
func mbdRestart() int {
	c, cx, done, ok := connect()
	if !ok {
		return 255
	}
	defer done()
	reply, err := c.Control(cx, &api.ControlRequest{Action: api.ControlRequest_MBD_RESTART})
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	for _, r := range reply.Results {
		if r.Error != "" {
			fmt.Fprintln(sys.stderr, "mbdrestart:", r.Error)
			return 255
		}
	}
	fmt.Fprintln(sys.stdout, "MBD restart initiated")
	return 0
}

// showStatus is badmin showstatus: the hosts, every user's jobs and the
// controller's own facts, summarized.
func showStatus() int {
	c, cx, done, ok := connect()
	if !ok {
		return 255
	}
	defer done()
	hosts, err := c.ListHosts(cx, &api.ListHostsRequest{})
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	jobs, err := c.Query(cx, &api.QueryRequest{User: "all", Scope: api.QueryRequest_ALL})
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	info, err := c.Info(cx, &api.ClusterInfoRequest{})
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	if err := lsfout.WriteShowStatus(sys.stdout, hosts.Hosts, jobs.Jobs, info, nil); err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	return 0
}

// perfmonCmd is badmin perfmon start [period] | view [-json] | stop |
// setperiod period.
func perfmonCmd(words []string, asJSON bool) int {
	const usage = "badmin perfmon start [sample_period] | view [-json] | stop | setperiod sample_period"
	bad := func() int {
		fmt.Fprintf(sys.stderr, "Usage: %s\n", usage)
		return 255
	}
	if len(words) == 0 {
		return bad()
	}
	req := &api.PerfmonRequest{}
	switch words[0] {
	case "view":
		if len(words) != 1 {
			return bad()
		}
	case "stop":
		if len(words) != 1 {
			return bad()
		}
		req.Op = api.PerfmonRequest_STOP
	case "start", "setperiod":
		req.Op = api.PerfmonRequest_START
		if words[0] == "setperiod" {
			req.Op = api.PerfmonRequest_SET_PERIOD
		}
		if len(words) > 2 || (len(words) == 1 && req.Op == api.PerfmonRequest_SET_PERIOD) {
			return bad()
		}
		if len(words) == 2 {
			n, err := strconv.Atoi(words[1])
			if err != nil || n <= 0 {
				fmt.Fprintf(sys.stderr, "%s: the sample period is a number of seconds, at least 1\n", words[1])
				return 255
			}
			req.PeriodSec = int32(min(n, 1<<30))
		}
	default:
		return bad()
	}
	c, cx, done, ok := connect()
	if !ok {
		return 255
	}
	defer done()
	reply, err := c.Perfmon(cx, req)
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	switch req.Op {
	case api.PerfmonRequest_START:
		fmt.Fprintf(sys.stdout, "Performance monitor started; sample period: %d seconds\n", reply.PeriodSec)
	case api.PerfmonRequest_STOP:
		fmt.Fprintln(sys.stdout, "Performance monitor stopped")
	case api.PerfmonRequest_SET_PERIOD:
		fmt.Fprintf(sys.stdout, "Performance monitor sample period set to %d seconds\n", reply.PeriodSec)
	default:
		if asJSON {
			err = lsfout.WritePerfmonJSON(sys.stdout, reply)
		} else {
			err = lsfout.WritePerfmon(sys.stdout, reply, nil)
		}
		if err != nil {
			fmt.Fprintln(sys.stderr, err)
			return 255
		}
	}
	return 0
}
