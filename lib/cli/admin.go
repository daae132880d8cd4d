package cli

import (
	"fmt"

	"google.golang.org/grpc/status"

	"xce/lib/api"
)

// badmin is the administrator's command; this part covers reconfig and
// ckconfig (the host and queue controls belong to a later change).
func badmin(args []string) int {
	var verbose, force bool
	var words []string
	cmd, code := newCommand("badmin reconfig [-v] [-f] | ckconfig [-v]", "Administer the cluster", func(a []string) int {
		words = a
		return 0
	})
	cmd.Flags().BoolVar(&verbose, "v", false, "say what changed")
	cmd.Flags().BoolVar(&force, "f", false, "do not ask before reconfiguring (XCE never asks)")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	if len(words) != 1 || (words[0] != "reconfig" && words[0] != "ckconfig") {
		fmt.Fprintf(sys.stderr, "Usage: %s\n", cmd.Use)
		return 255
	}
	check := words[0] == "ckconfig"
	c, cx, done, ok := connect()
	if !ok {
		return 255
	}
	defer done()
	fmt.Fprintln(sys.stdout, "\nChecking configuration files ...")
	reply, err := c.Reconfig(cx, &api.ReconfigRequest{CheckOnly: check})
	if err != nil {
		st, _ := status.FromError(err)
		if st.Code().String() == "PermissionDenied" {
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
