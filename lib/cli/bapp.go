package cli

import (
	"fmt"
	"io"

	"xce/lib/api"
	"xce/lib/lsfout"
)

// bapp lists the application profiles: the default table, -w (names not
// cut) or -l (their configuration). A profile that does not exist is an
// error ("name: No such application profile", exit 255); with no profiles
// configured bapp prints "No application profiles found" on stderr and
// exits 255, as bjobs does when it finds no jobs.
func bapp(args []string) int {
	var noHeader, long, wide bool
	var names []string
	cmd, code := newCommand("bapp [-l | -w] [-noheader] [application_profile ...]", "Show application profiles", func(a []string) int {
		names = a
		return 0
	})
	cmd.Flags().BoolVar(&noHeader, "noheader", false, "no header line")
	cmd.Flags().BoolVar(&long, "l", false, "long format: statistics and parameters")
	cmd.Flags().BoolVar(&wide, "w", false, "wide format: names not cut")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	if long && wide {
		fmt.Fprintln(sys.stderr, "bapp: -l and -w cannot be used together")
		fmt.Fprintf(sys.stderr, "Usage: %s\n", cmd.UseLine())
		return 255
	}
	c, cx, done, ok := connect()
	if !ok {
		return 255
	}
	defer done()
	reply, err := c.ListApps(cx, &api.ListAppsRequest{Names: names})
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	if len(reply.Apps) == 0 {
		fmt.Fprintln(sys.stderr, "No application profiles found")
		return 255
	}
	write := func(w io.Writer) error { return lsfout.WriteApps(w, reply.Apps, noHeader, wide) }
	if long {
		write = func(w io.Writer) error { return lsfout.WriteAppsLong(w, reply.Apps) }
	}
	if err := write(sys.stdout); err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	return 0
}
