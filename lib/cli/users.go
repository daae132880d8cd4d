package cli

import (
	"context"
	"fmt"
	"os/user"
	"slices"
	"strings"

	"xce/lib/api"
	"xce/lib/client"
	"xce/lib/lsfout"
)

// busers shows users' job slots by state, counted from their unfinished
// jobs. With no user named it shows the invoking user; "all" shows one line
// per user that has unfinished jobs and per user or group with a limit
// configured (LSF also lists the users it knows that have neither; XCE
// knows users only through their jobs and its configuration). A named user without
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
	if all {
		counts = withLimited(c, cx, counts, info, infoErr == nil)
	} else {
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

// withLimited adds to busers all the users and groups that have limits
// configured ([users] max_slots, [[limits]] users and per_user), as LSF
// lists them whether or not they have jobs; sorted by name.
func withLimited(c *client.Client, cx context.Context, counts []lsfout.UserSlots, info *api.ClusterInfo, infoOK bool) []lsfout.UserSlots {
	named := map[string]bool{}
	if infoOK {
		for name := range info.GetUserSlotLimits() {
			named[name] = true
		}
	}
	if lr, err := c.Limits(cx, &api.LimitsRequest{}); err == nil {
		for _, l := range lr.GetConfigs() {
			for _, u := range append(slices.Clone(l.GetUsers()), l.GetPerUser()...) {
				if u != "all" && !strings.HasPrefix(u, "~") {
					named[u] = true
				}
			}
		}
	}
	for _, u := range counts {
		delete(named, u.User)
	}
	for name := range named {
		counts = append(counts, lsfout.UserSlots{User: name})
	}
	slices.SortFunc(counts, func(a, b lsfout.UserSlots) int { return strings.Compare(a.User, b.User) })
	return counts
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
