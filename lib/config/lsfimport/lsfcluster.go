package lsfimport

// What the importer takes from lsf.cluster.NAME.

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"xce/lib/config"
)

func (im *importer) lsfCluster(f *File, name string, setName bool) {
	if f == nil {
		return
	}
	if setName {
		im.cluster.set("name", config.TOMLString(name), "", src{f.Name, 0, ""})
	}
	for _, p := range f.Params {
		im.notTranslated(p, nil)
	}
	var maps []*Section
	for _, s := range f.Sections {
		switch strings.ToUpper(s.Name) {
		case "CLUSTERADMINS":
			for _, p := range s.Params {
				if strings.EqualFold(p.Key, "ADMINISTRATORS") {
					im.cluster.set("administrators", tomlList(List(p.Value)), "", psrc(p))
				} else {
					im.notTranslated(p, nil)
				}
			}
		case "HOST":
			im.clusterHosts(s)
		case "RESOURCEMAP":
			maps = append(maps, s)
		default:
			im.sectionNote(s, "xce.toml has no equivalent")
		}
	}
	for _, s := range maps {
		im.resourceMap(s)
	}
}

func (im *importer) clusterHosts(s *Section) {
	for _, r := range s.Rows {
		name, _ := s.Get(r, "HOSTNAME")
		at := src{r.File, r.Line, name}
		if v, ok := s.Get(r, "server"); ok && strings.TrimSpace(v) == "0" {
			im.note(at, "not translated: a client-only host (server 0) runs no jobs")
			continue
		}
		if im.badName(at, name, true) {
			continue
		}
		if im.hosts[name] != nil {
			im.note(at, "not translated: host listed twice; the first line is kept")
			continue
		}
		h := &hostInfo{t: im.d.table(fileLine(r.File, r.Line), at, "hosts", name)}
		im.hosts[name] = h
		im.hostOrd = append(im.hostOrd, name)
		for i, c := range s.Columns {
			v := r.Fields[i]
			switch strings.ToUpper(c) {
			case "HOSTNAME", "SERVER":
			case "MODEL", "TYPE":
				if !Empty(v) && v != "!" {
					h.t.set(strings.ToLower(c), config.TOMLString(v), "", src{r.File, r.Line, c})
				}
				if strings.EqualFold(c, "MODEL") {
					if f, ok := im.models[v]; ok {
						h.t.set("cpu_factor", strconv.FormatFloat(f, 'f', -1, 64), "HostModel "+v+" CPUFACTOR", im.modelSrc[v])
					} else if v == "!" && len(im.models) > 0 {
						im.note(src{r.File, r.Line, c}, "not translated for %s: a detected model (!) gets no CPU factor of HostModel; set hosts.%s.cpu_factor", name, name)
					}
				}
			case "RESOURCES":
				im.hostResources(h, name, List(v), src{r.File, r.Line, "RESOURCES"})
			default:
				if !Empty(v) {
					im.note(src{r.File, r.Line, c}, "not translated for %s: xce has no load thresholds or per-host settings of this kind", name)
				}
			}
		}
	}
}

func (im *importer) hostResources(h *hostInfo, host string, items []string, at src) {
	for _, it := range items {
		name, val, hasVal := strings.Cut(it, "=")
		r := im.res[name]
		switch {
		case r == nil:
			im.note(at, "not translated for %s: %s is not a resource of lsf.shared that was imported", host, name)
		case r.kind == "boolean" && !hasVal:
			h.attrs = append(h.attrs, name)
		case r.kind == "boolean" || !hasVal:
			im.note(at, "not translated for %s: %q does not fit %s resource %s", host, it, r.kind, name)
		default:
			im.setHostValue(h, name, r.kind, val)
		}
	}
}

// setHostValue records a static value of a numeric or string resource.
func (im *importer) setHostValue(h *hostInfo, name, kind, val string) {
	v := config.TOMLString(val)
	if kind == "numeric" {
		if _, err := strconv.ParseFloat(val, 64); err != nil {
			v = "" // settle would refuse it
		} else if _, err := strconv.ParseInt(val, 10, 64); err == nil {
			v = val
		} else {
			v = strconv.FormatFloat(mustFloat(val), 'f', -1, 64)
			if !strings.ContainsAny(v, ".e") {
				v += ".0"
			}
		}
	}
	if v == "" {
		return
	}
	if i := slices.Index(h.resKeys, name); i >= 0 {
		h.resVals[i] = v
		return
	}
	h.resKeys = append(h.resKeys, name)
	h.resVals = append(h.resVals, v)
}

func mustFloat(s string) float64 { f, _ := strconv.ParseFloat(s, 64); return f }

var locRE = regexp.MustCompile(`^([^@\s]*)@\[([^\]]*)\]$`)

func (im *importer) resourceMap(s *Section) {
	for _, r := range s.Rows {
		name, _ := s.Get(r, "RESOURCENAME")
		loc, _ := s.Get(r, "LOCATION")
		at := src{r.File, r.Line, name}
		res := im.res[name]
		if res == nil {
			im.note(at, "not translated: %s is not a resource of lsf.shared that was imported", name)
			continue
		}
		items := List(loc)
		// "([all])", "(5@[all])": one shared instance.
		if len(items) == 1 {
			if m := locRE.FindStringSubmatch(items[0]); m != nil && strings.TrimSpace(m[2]) == "all" {
				n, err := strconv.ParseInt(m[1], 10, 64)
				if res.kind == "numeric" && err == nil && n > 0 {
					res.t.set("total", tomlInt(n), "ResourceMap "+loc, at)
					res.t.remove("consumable")
					continue
				}
				im.loss(at, "not translated: a shared instance needs a numeric resource and a positive count (N@[all]); %s", loc)
				continue
			}
		}
		for _, it := range items {
			m := locRE.FindStringSubmatch(it)
			if m == nil || m[1] == "" {
				if res.reported {
					// The hosts whose ELIM reports it (reportedNote).
					res.hosts = append(res.hosts, strings.Fields(strings.Trim(it, "[]"))...)
					continue
				}
				im.note(at, "not translated: %s has no value, and lsf.shared gives %s no INTERVAL (an ELIM would report it)", it, name)
				continue
			}
			if res.kind == "boolean" {
				im.note(at, "not translated: %s: a Boolean resource is given in the Host section's RESOURCES", it)
				continue
			}
			var targets []string
			for _, h := range strings.Fields(m[2]) {
				switch {
				case h == "default" || h == "others":
					for _, hn := range im.hostOrd {
						if !slices.Contains(im.hosts[hn].resKeys, name) {
							targets = append(targets, hn)
						}
					}
				case im.hosts[h] != nil:
					targets = append(targets, h)
				default:
					im.note(at, "not translated: %s: %s is not a host of the Host section", it, h)
				}
			}
			for _, hn := range targets {
				im.setHostValue(im.hosts[hn], name, res.kind, m[1])
			}
		}
	}
}
