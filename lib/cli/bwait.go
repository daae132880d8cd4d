package cli

import (
	"fmt"
	"time"

	"xce/lib/api"
)

// bwait blocks until a dependency condition is met (exit 0), can never be
// met, or the timeout passes (exit 255 for both, with a line saying
// which).
func bwait(args []string) int {
	var cond string
	var timeout int
	cmd, code := newCommand(`bwait -w "wait_condition" [-t timeout]`, "Wait for a dependency condition", func(a []string) int {
		if len(a) > 0 {
			return -1
		}
		return 0
	})
	cmd.Flags().StringVar(&cond, "w", "", "the condition, as bsub -w takes it")
	cmd.Flags().IntVar(&timeout, "t", 0, "give up after this many minutes (0: never)")
	cmd.Flags().Int("r", 0, "re-registration interval in minutes (accepted; XCE polls)")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	} else if rc < 0 || cond == "" {
		fmt.Fprintf(sys.stderr, "Usage: %s\n", cmd.Use)
		return 255
	}
	if timeout < 0 {
		fmt.Fprintf(sys.stderr, "%d: Bad timeout value\n", timeout)
		return 255
	}
	c, _, done, ok := connect()
	if !ok {
		return 255
	}
	defer done()
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(time.Duration(timeout) * time.Minute)
	}
	for delay := 100 * time.Millisecond; ; delay = min(delay*2, 2*time.Second) {
		cx, cancel := connectTimeout()
		reply, err := c.Dependency(cx, &api.DependencyRequest{Expression: cond})
		cancel()
		if err != nil {
			fmt.Fprintln(sys.stderr, rpcError(c, err))
			return 255
		}
		switch reply.Status {
		case api.DependencyReply_MET:
			return 0
		case api.DependencyReply_NEVER:
			fmt.Fprintln(sys.stderr, "Wait condition is never satisfied")
			return 255
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			fmt.Fprintln(sys.stderr, "Wait condition timed out")
			return 255
		}
		time.Sleep(delay)
	}
}
