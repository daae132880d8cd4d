package lsfimport

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"xce/lib/config"
)

// ---- lsb.resources, and the limits of other files that are [[limits]]

// limit is one Limit section, horizontal, or one row of a vertical one.
type limit struct {
	at   src
	name string
	keys []string // upper-case, in order
	vals map[string]string
	srcs map[string]src
}

// limitReasons are the Limit keys [[limits]] has no equivalent of.
var limitReasons = map[string]string{
	"ELIGIBLE_PEND_JOBS":   "xce has no limit on eligible pending jobs",
	"INELIGIBLE":           "xce has no ineligible-job limits",
	"JOBS_PER_SCHED_CYCLE": "xce has no per-cycle dispatch limit",
}

func (im *importer) lsbResources(f *File) {
	if f == nil {
		return
	}
	for _, s := range f.Sections {
		if strings.EqualFold(s.Name, "ResourceReservation") {
			im.rsvPolicy(s)
			continue
		}
		if !strings.EqualFold(s.Name, "Limit") {
			im.sectionNote(s, "xce.toml has no equivalent")
			continue
		}
		if s.Columns == nil {
			l := &limit{at: src{s.File, s.Line, "Begin Limit"}, vals: map[string]string{}, srcs: map[string]src{}}
			for _, p := range s.Params {
				k := strings.ToUpper(p.Key)
				if _, dup := l.vals[k]; !dup {
					l.keys = append(l.keys, k)
				}
				l.vals[k], l.srcs[k] = p.Value, psrc(p)
			}
			im.limit(l)
			continue
		}
		for _, r := range s.Rows {
			l := &limit{at: src{r.File, r.Line, "Limit"}, vals: map[string]string{}, srcs: map[string]src{}}
			for i, c := range s.Columns {
				k := strings.ToUpper(c)
				if i >= len(r.Fields) || Empty(r.Fields[i]) {
					continue
				}
				v := r.Fields[i]
				if strings.HasPrefix(v, "(") && strings.HasSuffix(v, ")") {
					v = strings.Join(List(v), " ")
				}
				l.keys = append(l.keys, k)
				l.vals[k], l.srcs[k] = v, src{r.File, r.Line, c}
			}
			im.limit(l)
		}
	}
}

var limitResRE = regexp.MustCompile(`^\[\s*([^,\[\]\s]+)\s*,\s*([^,\[\]\s]+)\s*\]`)

// maxInt32 is the largest count xce keeps (its counts are int32 on the
// wire).
const maxInt32 = 1<<31 - 1

// label names the limit in notes.
func (l *limit) label() string {
	if l.name != "" {
		return "Limit " + l.name
	}
	return "Limit"
}

// limit translates one Limit into a [[limits]] entry. A Limit that holds
// anything the entry cannot say is dropped whole, as a loss: a limit with
// one of its resources left out would let jobs through that LSF holds.
func (im *importer) limit(l *limit) {
	l.name = l.vals["NAME"]
	label := l.label()
	name := l.name
	if name == "" {
		name = fmt.Sprintf("limit_%d", l.at.line)
	}
	if !utf8.ValidString(name) || im.badName(l.srcs["NAME"], name, false) {
		im.loss(l.at, "%s not translated: its name is not a valid xce name", label)
		return
	}
	if im.limitNames[name] {
		im.loss(l.srcs["NAME"], "%s not translated: a limit of that name was translated already", label)
		return
	}
	type kv struct{ k, v, comment string }
	var out []kv
	lost := false
	lose := func(at src, format string, a ...any) {
		im.loss(at, label+" not translated: "+format, a...)
		lost = true
	}
	consumers := 0
	resources := 0
	for _, k := range l.keys {
		v, at := l.vals[k], l.srcs[k]
		key := strings.ToLower(k)
		switch k {
		case "NAME":
		case "USERS", "PER_USER", "QUEUES", "PER_QUEUE", "HOSTS", "PER_HOST",
			"PROJECTS", "PER_PROJECT", "APPS", "PER_APP", "LIC_PROJECTS", "PER_LIC_PROJECT":
			names := List(v)
			if len(names) == 0 {
				continue
			}
			for _, n := range names {
				bare := strings.TrimPrefix(n, "~")
				if k == "PER_USER" || k == "USERS" {
					bare = strings.TrimSuffix(bare, "@")
				}
				if !config.ValidName(bare) {
					lose(at, "%q is not a name xce can hold", n)
				}
			}
			consumers++
			out = append(out, kv{key, tomlList(names), ""})
		case "SLOTS", "JOBS":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 || n > maxInt32 {
				lose(at, "%q is not a number from 0 to %d", v, maxInt32)
				continue
			}
			resources++
			out = append(out, kv{key, tomlInt(n), ""})
		case "SLOTS_PER_PROCESSOR":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f <= 0 || f > maxInt32 {
				lose(at, "%q is not a positive number", v)
				continue
			}
			resources++
			out = append(out, kv{key, strconv.FormatFloat(f, 'f', -1, 64), ""})
		case "MEM", "SWP", "TMP":
			if pct, ok := strings.CutSuffix(v, "%"); ok {
				f, err := strconv.ParseFloat(pct, 64)
				if err != nil || f < 0 || f > 100 {
					lose(at, "%q is not a percentage", v)
					continue
				}
				resources++
				out = append(out, kv{key, config.TOMLString(v), ""})
				continue
			}
			m, ok := im.memory(v)
			if !ok {
				lose(at, "%q is not an amount of memory", v)
				continue
			}
			resources++
			out = append(out, kv{key, config.TOMLString(m.String()), fmt.Sprintf("%s %s in %s", k, v, im.unitName)})
		case "RESOURCE":
			var keys, vals []string
			rest := strings.TrimSpace(v)
			for rest != "" {
				m := limitResRE.FindStringSubmatch(rest)
				if m == nil {
					lose(at, "%q is not [name,count] ...", v)
					break
				}
				rest = strings.TrimSpace(rest[len(m[0]):])
				n, err := strconv.ParseFloat(m[2], 64)
				switch {
				case err != nil || n < 0 || n > maxInt32:
					lose(at, "[%s,%s]: not a count", m[1], m[2])
				case im.res[m[1]] == nil || im.res[m[1]].kind != "numeric":
					lose(at, "[%s,%s]: %s is not a numeric resource of lsf.shared that was imported", m[1], m[2], m[1])
				default:
					keys, vals = append(keys, m[1]), append(vals, strconv.FormatFloat(n, 'f', -1, 64))
				}
			}
			resources += len(keys)
			out = append(out, kv{"resources", tomlInline(keys, vals), ""})
		default:
			why := limitReasons[k]
			if why == "" {
				why = "[[limits]] has no equivalent"
			}
			lose(at, "%s: %s", k, why)
		}
	}
	if lost {
		return
	}
	if resources == 0 {
		im.note(l.at, "%s not translated: it limits nothing", label)
		return
	}
	im.limitNames[name] = true
	t := im.d.limit(fileLine(l.at.file, l.at.line)+" "+label, l.at)
	t.set("name", config.TOMLString(name), "", l.srcs["NAME"])
	for _, e := range out {
		at := l.srcs[strings.ToUpper(e.k)]
		if e.k == "resources" {
			at = l.srcs["RESOURCE"]
		}
		t.set(e.k, e.v, e.comment, at)
	}
	if consumers == 0 {
		im.note(l.at, "%s: it names no consumer, so it holds for the whole cluster", label)
	}
}

// addLimit emits a [[limits]] entry that stands for a limit another file
// sets (lsb.hosts JL/U, lsb.queues PJOB_LIMIT, lsb.users group MAX_JOBS).
func (im *importer) addLimit(at src, name string, entries ...[2]string) {
	for i := 2; im.limitNames[name]; i++ {
		name = fmt.Sprintf("%s_%d", strings.TrimSuffix(name, fmt.Sprintf("_%d", i-1)), i)
	}
	im.limitNames[name] = true
	t := im.d.limit(fileLine(at.file, at.line)+" "+at.key, at)
	t.set("name", config.TOMLString(name), "", at)
	for _, e := range entries {
		t.set(e[0], e[1], "", at)
	}
}

// rsvPolicy translates a ResourceReservation section (an advance
// reservation policy) into a [[reservation_policies]] entry.
func (im *importer) rsvPolicy(s *Section) {
	at := src{s.File, s.Line, "Begin ResourceReservation"}
	t := im.d.rsvPolicy(fileLine(s.File, s.Line)+" ResourceReservation", at)
	for _, p := range s.Params {
		vals := List(p.Value)
		if len(vals) == 0 {
			vals = strings.Fields(p.Value)
		}
		switch strings.ToUpper(p.Key) {
		case "NAME":
			t.set("name", config.TOMLString(p.Value), "", psrc(p))
		case "USERS":
			t.set("users", tomlList(vals), "", psrc(p))
		case "HOSTS":
			t.set("hosts", tomlList(vals), "", psrc(p))
		case "TIME_WINDOW":
			t.set("time_windows", tomlList(vals), "", psrc(p))
		default:
			im.note(psrc(p), "%s: not translated: xce's reservation policies have no equivalent", p.Key)
		}
	}
}
