package cli

import (
	"fmt"
	"os/user"

	"xce/lib/api"
	"xce/lib/lsfout"
)

// busers shows users' job slots by state, counted from their unfinished
// jobs. With no user named it shows the invoking user; "all" shows one line
// per user that has unfinished jobs (LSF also lists the users it knows that
// have none; XCE knows users only through their jobs). A named user without
// jobs gets a line of zeros; a name that is neither a user nor a user
// group is refused as LSF does ("name: Unknown user").
func busers(args []string) int {
	var wide bool
	var names []string
	cmd, code := newCommand("busers [-w] [user_name ... | all]", "Show users' job slots by state", func(a []string) int {
		names = a
		return 0
	})
	cmd.Flags().BoolVar(&wide, "w", false, "wide format: user names not cut")
	acceptAlloc(cmd.Flags())
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	all := false
	for _, n := range names {
		all = all || n == "all"
	}
	if len(names) == 0 {
		me, ok := currentUser("busers")
		if !ok {
			return 255
		}
		names = []string{me}
	}
	c, cx, done, ok := connect()
	if !ok {
		return 255
	}
	defer done()
	res, err := c.Query(cx, &api.QueryRequest{User: "all"})
	if err != nil {
		fmt.Fprintln(sys.stderr, rpcError(c, err))
		return 255
	}
	counts := lsfout.CountUserSlots(res.Jobs)
	info, infoErr := c.Info(cx, &api.ClusterInfoRequest{})
	if !all {
		by := map[string]lsfout.UserSlots{}
		for _, u := range counts {
			by[u.User] = u
		}
		counts = counts[:0]
		seen := map[string]bool{}
		for _, n := range names {
			if seen[n] {
				continue
			}
			seen[n] = true
			u, ok := by[n]
			if !ok {
				if !knownUser(n, info) {
					fmt.Fprintf(sys.stderr, "%s: Unknown user\n", n)
					return 255
				}
				u = lsfout.UserSlots{User: n}
			}
			counts = append(counts, u)
		}
	}
	// MAX: the user's cluster-wide slot limit from the configuration.
	if infoErr == nil {
		for i := range counts {
			limit, ok := info.UserSlotLimits[counts[i].User]
			if !ok {
				limit = info.UserSlotLimits["default"]
			}
			counts[i].Max = int(limit)
		}
	}
	if err := lsfout.WriteUsers(sys.stdout, counts, wide); err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	return 0
}

// knownUser says whether a name busers was given is a user the system
// knows (or a configured user group).
func knownUser(name string, info *api.ClusterInfo) bool {
	if _, err := user.Lookup(name); err == nil {
		return true
	}
	for _, g := range info.GetUserGroups() {
		if g.Name == name {
			return true
		}
	}
	return false
}

// currentUser is the invoking user's name: from the user database, else
// $USER.
func currentUser(cmd string) (string, bool) {
	u, err := user.Current()
	if err == nil {
		return u.Username, true
	}
	if name := sys.getenv("USER"); name != "" {
		return name, true
	}
	fmt.Fprintf(sys.stderr, "%s: cannot tell who you are: %v\n", cmd, err)
	return "", false
}
