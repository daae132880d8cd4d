package lsfimport

// What the importer takes from lsb.users.

import (
	"strconv"
	"strings"

	"xce/lib/config"
)

func (im *importer) lsbUsers(f *File) {
	if f == nil {
		return
	}
	for _, s := range f.Sections {
		switch strings.ToUpper(s.Name) {
		case "USERGROUP":
			for _, r := range s.Rows {
				name, _ := s.Get(r, "GROUP_NAME")
				at := src{r.File, r.Line, name}
				if im.badName(at, name, true) {
					continue
				}
				mem, _ := s.Get(r, "GROUP_MEMBER")
				members := List(mem)
				if len(members) == 0 {
					im.note(at, "not translated: the group has no members")
					continue
				}
				t := im.d.table(fileLine(r.File, r.Line), at, "user_groups", name)
				t.set("members", tomlList(members), "", src{r.File, r.Line, "GROUP_MEMBER"})
				for i, c := range s.Columns {
					u := strings.ToUpper(c)
					if u == "GROUP_NAME" || u == "GROUP_MEMBER" || Empty(r.Fields[i]) {
						continue
					}
					why := "xce.toml has no equivalent"
					switch u {
					case "USER_SHARES":
						why = "xce has no hierarchical fair share; shares are given per queue (fairshare)"
					case "GROUP_ADMIN":
						why = "xce has no group administrators"
					}
					im.note(src{r.File, r.Line, c}, "not translated for %s: %s", name, why)
				}
			}
		case "USER":
			for _, r := range s.Rows {
				name, _ := s.Get(r, "USER_NAME")
				for i, c := range s.Columns {
					if strings.EqualFold(c, "USER_NAME") || Empty(r.Fields[i]) {
						continue
					}
					at := src{r.File, r.Line, c}
					// MAX_JOBS of a user (or of "default") is that user's
					// cluster-wide slot limit; a group's is a total over its
					// members, which xce does not have.
					key := map[string]string{"MAX_JOBS": "max_slots", "MAX_PEND_JOBS": "max_pend_jobs"}[strings.ToUpper(c)]
					if key != "" && !strings.HasSuffix(name, "@") && !im.userGroupNamed(f, name) {
						n, err := strconv.Atoi(r.Fields[i])
						if err == nil && n > 0 && !im.badName(src{r.File, r.Line, name}, name, false) {
							t := im.d.table(fileLine(r.File, r.Line), src{r.File, r.Line, name}, "users", name)
							t.set(key, tomlInt(int64(n)), strings.ToUpper(c), at)
							continue
						}
					}
					// A group's MAX_JOBS is a [[limits]] entry: "group"
					// limits the members together, "group@" each member.
					if strings.EqualFold(c, "MAX_JOBS") && (strings.HasSuffix(name, "@") || im.userGroupNamed(f, name)) {
						n, err := strconv.ParseInt(r.Fields[i], 10, 64)
						g := strings.TrimSuffix(name, "@")
						if err == nil && n >= 0 && n <= maxInt32 && config.ValidName(g) {
							key := "users"
							if strings.HasSuffix(name, "@") {
								key = "per_user"
							}
							im.addLimit(at, "max_jobs_"+g, [2]string{key, tomlList([]string{g})}, [2]string{"slots", tomlInt(n)})
							continue
						}
					}
					why := "xce.toml has per-user limits only (users.NAME.max_slots and max_pend_jobs, from MAX_JOBS and MAX_PEND_JOBS of a user)"
					im.loss(at, "not translated for %s (%s): %s", name, r.Fields[i], why)
				}
			}
		default:
			im.sectionNote(s, "xce.toml has no equivalent")
		}
	}
}

// userGroupNamed reports whether lsb.users defines a user group of that
// name.
func (im *importer) userGroupNamed(f *File, name string) bool {
	for _, s := range f.Sections {
		if !strings.EqualFold(s.Name, "UserGroup") {
			continue
		}
		for _, r := range s.Rows {
			if g, _ := s.Get(r, "GROUP_NAME"); g == name {
				return true
			}
		}
	}
	return false
}
