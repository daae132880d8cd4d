package api

import "strings"

// JobGroupPath writes a job group path (bsub -g, bjobs -g, bkill -g) as
// LSF shows it: "/a/b", with one leading slash and none at the end,
// whatever slashes it was given with; "" stays "" and "/" is the root.
func JobGroupPath(g string) string {
	g = strings.TrimSpace(g)
	if g == "" {
		return ""
	}
	var parts []string
	for _, p := range strings.Split(g, "/") {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return "/" + strings.Join(parts, "/")
}
