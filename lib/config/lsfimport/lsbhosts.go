package lsfimport

// What the importer takes from lsb.hosts.

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"xce/lib/config"
	"xce/lib/hostlist"
)

func (im *importer) lsbHosts(f *File) {
	if f == nil {
		return
	}
	var groups, units []*Section
	for _, s := range f.Sections {
		switch strings.ToUpper(s.Name) {
		case "HOST":
			im.batchHosts(s)
		case "HOSTGROUP":
			groups = append(groups, s)
		case "COMPUTEUNIT":
			units = append(units, s)
		case "HOSTPARTITION":
			im.sectionNote(s, "xce has no host-partition fair share")
		default:
			im.sectionNote(s, "xce.toml has no equivalent")
		}
	}
	for _, s := range groups {
		for _, r := range s.Rows {
			if name, _ := s.Get(r, "GROUP_NAME"); im.hosts[name] == nil {
				im.hgroupNames[name] = true
			}
		}
	}
	for _, s := range groups {
		im.hostGroups(s)
	}
	im.computeUnits(units)
}

// computeUnits translates the ComputeUnit sections into [[compute_units]],
// finer types first (xce.toml wants a unit defined before the units that
// contain it), each type's units in LSF's order (cu[pref=config]).
func (im *importer) computeUnits(secs []*Section) {
	if len(secs) == 0 {
		return
	}
	if len(im.cuTypes) == 0 {
		for _, s := range secs {
			im.sectionNote(s, "lsb.params has no COMPUTE_UNIT_TYPES")
		}
		return
	}
	type row struct {
		s *Section
		r Row
	}
	byType := map[string][]row{}
	for _, s := range secs {
		for _, r := range s.Rows {
			typ, _ := s.Get(r, "TYPE")
			name, _ := s.Get(r, "NAME")
			if !slices.Contains(im.cuTypeNames(), typ) {
				im.note(src{r.File, r.Line, name}, "not translated: %q is not one of COMPUTE_UNIT_TYPES", typ)
				continue
			}
			byType[typ] = append(byType[typ], row{s, r})
		}
	}
	done := map[string]bool{}
	types := im.cuTypeNames()
	for level, typ := range types {
		for _, x := range byType[typ] {
			s, r := x.s, x.r
			name, _ := s.Get(r, "NAME")
			at := src{r.File, r.Line, name}
			if im.badName(at, name, true) {
				continue
			}
			if done[name] || im.hgroups[name] || im.hosts[name] != nil {
				im.note(at, "not translated: the name is already a host, host group or compute unit")
				continue
			}
			mem, _ := s.Get(r, "MEMBER")
			msrc := src{r.File, r.Line, "MEMBER"}
			var members []string
			if level == 0 {
				if l := List(mem); len(l) == 1 && l[0] == "!" {
					im.loss(at, "not translated: xce has no egroup to read the members from")
					continue
				}
				members = im.hostRefs(List(mem), false, msrc, name)
			} else {
				for _, m := range List(mem) {
					if done[m] {
						members = append(members, m)
					} else {
						im.note(msrc, "not translated for %s: %s is not a compute unit of type %s", name, m, types[level-1])
					}
				}
			}
			if len(members) == 0 {
				im.loss(at, "not translated: the compute unit has no member xce knows")
				continue
			}
			done[name] = true
			t := im.d.unit(fileLine(r.File, r.Line), at)
			t.set("name", config.TOMLString(name), "", at)
			t.set("type", config.TOMLString(typ), "", src{r.File, r.Line, "TYPE"})
			t.set("members", tomlList(members), "", msrc)
			if v, _ := s.Get(r, "CONDENSE"); strings.EqualFold(v, "Y") {
				t.set("condense", "true", "", src{r.File, r.Line, "CONDENSE"})
			}
			for i, c := range s.Columns {
				switch strings.ToUpper(c) {
				case "NAME", "MEMBER", "TYPE", "CONDENSE":
				default:
					if !Empty(r.Fields[i]) {
						im.note(src{r.File, r.Line, c}, "not translated for %s: xce.toml has no equivalent", name)
					}
				}
			}
		}
	}
}

func (im *importer) batchHosts(s *Section) {
	var def *Row
	jlu := map[string]bool{} // hosts with a JL/U of their own
	for _, r := range s.Rows {
		name, _ := s.Get(r, "HOST_NAME")
		at := src{r.File, r.Line, name}
		h := im.hosts[name]
		switch {
		case name == "default":
			def = &r
		case h == nil:
			report := im.note
			for _, k := range []string{"MXJ", "JL/U"} {
				if v, _ := s.Get(r, k); !Empty(v) && v != "!" {
					report = im.loss // its slot limits are lost
				}
			}
			report(at, "not translated: not a host of lsf.cluster's Host section (host types and models are not supported here)")
			continue
		}
		for i, c := range s.Columns {
			v := r.Fields[i]
			switch strings.ToUpper(c) {
			case "HOST_NAME":
			case "MXJ":
				if Empty(v) || v == "!" {
					continue
				}
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil || n <= 0 {
					im.note(src{r.File, r.Line, "MXJ"}, "not translated for %s: %q is not a positive number of slots", name, v)
					continue
				}
				if h != nil {
					h.slots, h.slotsFrom = n, src{r.File, r.Line, "MXJ"}
				}
			case "JL/U":
				if Empty(v) || name == "default" {
					continue
				}
				at := src{r.File, r.Line, c}
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil || n < 0 || n > maxInt32 {
					im.loss(at, "not translated for %s: %q is not a number of slots", name, v)
					continue
				}
				if h != nil {
					jlu[name] = true
					im.addLimit(at, "jlu_"+name, [2]string{"hosts", tomlList([]string{name})},
						[2]string{"per_user", tomlList([]string{"all"})}, [2]string{"slots", tomlInt(n)})
				}
			default:
				if !Empty(v) {
					im.note(src{r.File, r.Line, c}, "not translated for %s: xce has no load thresholds or per-host settings of this kind", name)
				}
			}
		}
	}
	if def != nil {
		mxj, _ := s.Get(*def, "MXJ")
		if n, err := strconv.ParseInt(mxj, 10, 64); err == nil && n > 0 {
			for _, hn := range im.hostOrd {
				if h := im.hosts[hn]; h.slots == 0 {
					h.slots, h.slotsFrom = n, src{def.File, def.Line, "MXJ"}
				}
			}
		}
		// The default line's JL/U holds on every host without its own.
		if v, _ := s.Get(*def, "JL/U"); !Empty(v) {
			at := src{def.File, def.Line, "JL/U"}
			n, err := strconv.ParseInt(v, 10, 64)
			var rest []string
			for _, hn := range im.hostOrd {
				if !jlu[hn] {
					rest = append(rest, hn)
				}
			}
			switch {
			case err != nil || n < 0 || n > maxInt32:
				im.loss(at, "not translated for default: %q is not a number of slots", v)
			case len(rest) > 0:
				im.addLimit(at, "jlu_default", [2]string{"per_host", tomlList(rest)},
					[2]string{"per_user", tomlList([]string{"all"})}, [2]string{"slots", tomlInt(n)})
			}
		}
	}
}

// finishHosts writes the hosts' tables.
func (im *importer) finishHosts() {
	for _, hn := range im.hostOrd {
		h := im.hosts[hn]
		if h.slots > 0 {
			h.t.set("slots", tomlInt(h.slots), "MXJ", h.slotsFrom)
		}
		h.t.set("attributes", tomlList(h.attrs), "", h.t.src)
		h.t.set("resources", tomlInline(h.resKeys, h.resVals), "", h.t.src)
	}
}

var rangeRE = regexp.MustCompile(`^(.*)\[(\d+)-(\d+)\](.*)$`)

// expandRange turns "gpu[01-16]" into gpu01 ... gpu16; other names are
// returned as they are.
func expandRange(name string) []string {
	m := rangeRE.FindStringSubmatch(name)
	if m == nil {
		return []string{name}
	}
	a, _ := strconv.Atoi(m[2])
	b, _ := strconv.Atoi(m[3])
	if b < a || b-a > 10000 {
		return []string{name}
	}
	var out []string
	for i := a; i <= b; i++ {
		out = append(out, fmt.Sprintf("%s%0*d%s", m[1], len(m[2]), i, m[4]))
	}
	return out
}

func (im *importer) hostGroups(s *Section) {
	for _, r := range s.Rows {
		name, _ := s.Get(r, "GROUP_NAME")
		at := src{r.File, r.Line, name}
		if im.badName(at, name, true) {
			continue
		}
		if im.hgroups[name] || im.hosts[name] != nil {
			im.note(at, "not translated: the name is already a host or a host group")
			continue
		}
		mem, _ := s.Get(r, "GROUP_MEMBER")
		members := im.hostRefs(List(mem), false, src{r.File, r.Line, "GROUP_MEMBER"}, name)
		if len(members) == 0 {
			im.note(at, "not translated: the group has no member xce knows")
			continue
		}
		im.hgroups[name] = true
		t := im.d.table(fileLine(r.File, r.Line), at, "host_groups", name)
		t.set("members", tomlList(members), "", src{r.File, r.Line, "GROUP_MEMBER"})
		for i, c := range s.Columns {
			if u := strings.ToUpper(c); u != "GROUP_NAME" && u != "GROUP_MEMBER" && !Empty(r.Fields[i]) {
				im.note(src{r.File, r.Line, c}, "not translated for %s: xce.toml has no equivalent", name)
			}
		}
	}
}

var prefRE = regexp.MustCompile(`^(.*)\+(\d+)$`)

// hostRefs keeps the entries of a host list that name something known:
// hosts, host groups, "all" (and in a queue "others" and "none"), with
// "~" exclusions and "+N" preferences; ranges are expanded.
func (im *importer) hostRefs(list []string, queue bool, at src, owner string) []string {
	var out []string
	for _, e := range list {
		t := hostlist.Parse(e)
		neg, name, pref := strings.HasPrefix(e, "~"), t.Name, ""
		if t.HasPref {
			pref = "+" + strconv.Itoa(t.Pref)
		}
		if strings.ContainsAny(name, "*?") {
			im.note(at, "not translated for %s: %s: xce host lists have no wildcards", owner, e)
			continue
		}
		names := expandRange(name)
		for _, n := range names {
			known := n == "all" || im.hosts[n] != nil || im.hgroups[n] || im.hgroupNames[n] && !queue || queue && (n == "others" || n == "none")
			if !known {
				if len(names) == 1 {
					im.note(at, "not translated for %s: %s is not a known host or host group", owner, n)
				}
				continue
			}
			if neg {
				n = "~" + n
			}
			out = append(out, n+pref)
		}
		if len(names) > 1 {
			kept := 0
			for _, n := range names {
				if im.hosts[n] != nil {
					kept++
				}
			}
			if kept < len(names) {
				im.note(at, "translated for %s: the range %s is expanded to the %d of its %d hosts that lsf.cluster names", owner, e, kept, len(names))
			}
		}
	}
	return out
}
