package lsfimport

// What the importer takes from lsf.shared.

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"xce/lib/config"
	"xce/lib/resreq"
)

var lsfSharedSkip = map[string]string{
	"HOSTTYPE": "xce detects host types (set hosts.NAME.type to override)",
}

func (im *importer) lsfShared(f *File) string {
	if f == nil {
		return ""
	}
	name := ""
	for _, p := range f.Params {
		im.notTranslated(p, nil)
	}
	for _, s := range f.Sections {
		switch strings.ToUpper(s.Name) {
		case "CLUSTER":
			for i, r := range s.Rows {
				cn, _ := s.Get(r, "CLUSTERNAME")
				if i > 0 {
					im.note(src{r.File, r.Line, "ClusterName"}, "not translated: only the first cluster, %s, is imported", name)
					continue
				}
				name = cn
				im.cluster.set("name", config.TOMLString(cn), "", src{r.File, r.Line, "ClusterName"})
				im.cluster.src = src{r.File, r.Line, "ClusterName"}
				if v, ok := s.Get(r, "SERVERS"); ok && !Empty(v) {
					im.note(src{r.File, r.Line, "Servers"}, "not translated: xce has one controller, given to workers on their command line")
				}
			}
		case "RESOURCE":
			im.resources(s)
		case "HOSTMODEL":
			im.hostModels(s)
		default:
			why := lsfSharedSkip[strings.ToUpper(s.Name)]
			if why == "" {
				why = "xce.toml has no equivalent"
			}
			im.sectionNote(s, why)
		}
	}
	return name
}

// hostModels reads HostModel CPUFACTOR, given to the hosts of each model
// (hosts.NAME.cpu_factor) when lsf.cluster is read.
func (im *importer) hostModels(s *Section) {
	for _, r := range s.Rows {
		name, _ := s.Get(r, "MODELNAME")
		v, _ := s.Get(r, "CPUFACTOR")
		at := src{r.File, r.Line, name}
		if Empty(v) {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || f > 1e6 {
			im.note(at, "not translated: CPUFACTOR %q is not a positive number", v)
			continue
		}
		im.models[name] = f
		im.modelSrc[name] = src{r.File, r.Line, "CPUFACTOR"}
	}
	for i, c := range s.Columns {
		if u := strings.ToUpper(c); u != "MODELNAME" && u != "CPUFACTOR" && u != "ARCHITECTURE" {
			for _, r := range s.Rows {
				if i < len(r.Fields) && !Empty(r.Fields[i]) {
					im.note(src{r.File, r.Line, c}, "not translated: xce.toml has no equivalent")
				}
			}
		}
	}
}

var resNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (im *importer) resources(s *Section) {
	builtin := map[string]bool{}
	for _, r := range resreq.Builtins() {
		builtin[r.Name] = true
	}
	for _, r := range s.Rows {
		name, _ := s.Get(r, "RESOURCENAME")
		at := src{r.File, r.Line, name}
		switch {
		case !resNameRE.MatchString(name):
			im.note(at, "not translated: xce resource names are letters, digits and '_', starting with a letter or '_'")
			continue
		case builtin[name]:
			im.note(at, "not translated: %s is a built-in resource in xce", name)
			continue
		case im.res[name] != nil:
			im.note(at, "not translated: defined twice; the first definition is kept")
			continue
		}
		typ, _ := s.Get(r, "TYPE")
		kind := "boolean"
		switch strings.ToLower(typ) {
		case "", "()", "boolean":
		case "numeric":
			kind = "numeric"
		case "string":
			kind = "string"
		default:
			im.note(at, "not translated: unknown TYPE %q", typ)
			continue
		}
		t := im.d.table("lsf.shared Resource "+name+" ("+fileLine(r.File, r.Line)+")", at, "resources", name)
		im.res[name] = &resInfo{t: t, kind: kind}
		if d, _ := s.Get(r, "DESCRIPTION"); !Empty(d) {
			t.set("description", config.TOMLString(strings.Join(List(d), " ")), "", at)
		}
		t.set("type", config.TOMLString(kind), "", at)
		if v, _ := s.Get(r, "INCREASING"); yes(v) {
			if kind == "numeric" {
				t.set("increasing", "true", "", at)
			} else {
				im.note(src{r.File, r.Line, "INCREASING"}, "not translated for %s: only a numeric resource can be increasing", name)
			}
		}
		cons, _ := s.Get(r, "CONSUMABLE")
		if yes(cons) {
			if kind == "numeric" {
				t.set("consumable", "true", "", at)
			} else {
				im.note(src{r.File, r.Line, "CONSUMABLE"}, "not translated for %s: only a numeric resource can be consumable", name)
			}
		}
		if v, _ := s.Get(r, "INTERVAL"); !Empty(v) {
			// Dynamic: an ELIM reports it. LSF makes a dynamic numeric
			// resource consumable unless CONSUMABLE says N.
			im.res[name].reported, im.res[name].at = true, src{r.File, r.Line, "INTERVAL"}
			t.set("type", config.TOMLString(kind), "reported by an elim (INTERVAL "+strings.TrimSpace(v)+")", at)
			if kind == "numeric" && Empty(cons) {
				t.set("consumable", "true", "LSF's default for a dynamic numeric resource", at)
			}
		}
		if v, _ := s.Get(r, "RELEASE"); !Empty(v) {
			im.note(src{r.File, r.Line, "RELEASE"}, "not translated for %s: xce keeps a suspended job's reservation", name)
		}
		for i, c := range s.Columns {
			switch strings.ToUpper(c) {
			case "RESOURCENAME", "TYPE", "INTERVAL", "INCREASING", "CONSUMABLE", "RELEASE", "DESCRIPTION":
			default:
				if i < len(r.Fields) && !Empty(r.Fields[i]) {
					im.note(src{r.File, r.Line, c}, "not translated for %s: xce.toml has no equivalent", name)
				}
			}
		}
	}
}

func yes(v string) bool {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "Y", "YES":
		return true
	}
	return false
}

func fileLine(file string, line int) string { return fmt.Sprintf("%s:%d", file, line) }

// reportedNote lists the resources ELIMs report (INTERVAL) and where, for
// the administrator to install the elims: xce runs them as LSF does,
// from elim_dir.
func (im *importer) reportedNote() {
	var names []string
	var at src
	for _, name := range slices.Sorted(maps.Keys(im.res)) {
		r := im.res[name]
		if !r.reported {
			continue
		}
		if len(names) == 0 || r.at.line < at.line {
			at = r.at
		}
		n := name
		if slices.Contains(r.hosts, "default") || slices.Contains(r.hosts, "all") {
			n += " (every host)"
		} else if len(r.hosts) > 0 {
			n += " (" + strings.Join(r.hosts, " ") + ")"
		}
		names = append(names, n)
	}
	if len(names) == 0 {
		return
	}
	im.note(at, "resources an ELIM reports: %s; install the site's elim.* executables (from LSF_SERVERDIR) on those hosts in a directory root owns and set cluster.elim_dir (hosts.NAME.elim_dir for a host of its own)",
		strings.Join(names, ", "))
}
