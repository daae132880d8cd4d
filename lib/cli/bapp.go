package cli

import (
	"context"
	"errors"
	"fmt"

	"xce/lib/api"
	"xce/lib/client"
	"xce/lib/lsfout"
)

// bapp lists the application profiles: the default table, -w (names not
// cut) or -l (their configuration). A profile that does not exist is an
// error ("name: No such application profile", exit 255); with no profiles
// configured bapp prints "No application profiles found." on stderr (LSF's
// wording, with its full stop) and
// exits 255, as bjobs does when it finds no jobs.
func bapp(args []string) int {
	var noHeader, long, wide bool
	var names []string
	cmd, code := newCommand("bapp [-l | -w] [-noheader] [application_profile ...]", "Show application profiles", func(a []string) int {
		names = a
		return 0
	})
	cmd.Flags().BoolVar(&noHeader, "noheader", false, "no header line")
	acceptAlloc(cmd.Flags())
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
	return fetch(func(c *client.Client, cx context.Context) (*api.ListAppsReply, error) {
		return c.ListApps(cx, &api.ListAppsRequest{Names: names})
	}, func(reply *api.ListAppsReply) error {
		switch {
		case len(reply.Apps) == 0:
			return errors.New("No application profiles found.")
		case long:
			return lsfout.WriteAppsLong(sys.stdout, reply.Apps)
		}
		return lsfout.WriteApps(sys.stdout, reply.Apps, noHeader, wide)
	})
}
