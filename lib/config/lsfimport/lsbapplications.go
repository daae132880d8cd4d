package lsfimport

// What the importer takes from lsb.applications.

import (
	"fmt"
	"slices"
	"strings"

	"xce/lib/config"
	"xce/lib/container"
)

var appReasons = withJobLimits(map[string]string{
	"ABS_RUNLIMIT":   "xce run limits are always wall-clock",
	"HOST_PRE_EXEC":  "xce has no per-host pre/post-exec",
	"HOST_POST_EXEC": "xce has no per-host pre/post-exec",
})

func (im *importer) lsbApplications(f *File) {
	if f == nil {
		return
	}
	for _, s := range f.Sections {
		if !strings.EqualFold(s.Name, "Application") {
			im.sectionNote(s, "xce.toml has no equivalent")
			continue
		}
		np, ok := s.Param("NAME")
		if !ok || np.Value == "" {
			im.note(src{s.File, s.Line, "Begin Application"}, "not translated: the profile has no NAME")
			continue
		}
		name := np.Value
		if im.badName(psrc(np), name, false) {
			continue
		}
		if im.apps[name] {
			im.note(psrc(np), "not translated: profile %s is defined twice; the first is kept", name)
			continue
		}
		im.apps[name] = true
		t := im.d.table(fileLine(s.File, s.Line), psrc(np), "apps", name)
		for _, p := range s.Params {
			at := psrc(p)
			k := strings.ToUpper(p.Key)
			switch k {
			case "NAME":
			case "DESCRIPTION":
				t.set("description", config.TOMLString(strings.Join(strings.Fields(p.Value), " ")), "", at)
			case "REQUEUE_EXIT_VALUES":
				im.requeue(t, p)
			case "GPU_REQ":
				im.gpuReq(t, p)
			case "RERUNNABLE":
				im.rerunnable(t, p)
			case "RES_REQ", "PRE_EXEC", "POST_EXEC", "JOB_STARTER":
				t.set(strings.ToLower(k), config.TOMLString(p.Value), "", at)
				if k == "RES_REQ" {
					im.resreqs++
				}
			case "CONTAINER":
				im.container(t, p)
			case "EXEC_DRIVER":
				im.execDriver(t, p)
			case "TASKLIMIT", "PROCLIMIT":
				im.tasks(t, p)
			case "RUNLIMIT":
				vals := strings.Fields(p.Value)
				if len(vals) != 1 {
					im.note(at, "not translated: expected one [hour:]minute value")
					continue
				}
				if d, ok := im.runLimit(at, vals[0]); ok {
					t.set("run_limit", config.TOMLString(d.String()), "RUNLIMIT "+vals[0], at)
				}
			case "RUNTIME":
				im.runtime(t, p)
			case "MEMLIMIT":
				m, ok := im.memory(p.Value)
				if !ok {
					im.note(at, "not translated: %q is not an amount of memory", p.Value)
					continue
				}
				t.set("mem_limit", config.TOMLString(m.String()), fmt.Sprintf("MEMLIMIT %s in %s", p.Value, im.unitName), at)
			case "ENV_VARS":
				keys, vals := im.envVars(p)
				t.set("env", tomlInline(keys, vals), "", at)
			default:
				im.notTranslated(p, appReasons)
			}
		}
	}
}

// envVars reads ENV_VARS = "name='value'[,name1='value1'] ...".
func (im *importer) envVars(p Param) (keys, vals []string) {
	var parts []string
	var cur strings.Builder
	quoted := false
	for _, r := range Unquote(p.Value) {
		switch {
		case r == '\'':
			quoted = !quoted
		case r == ',' && !quoted:
			parts = append(parts, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteRune(r)
	}
	parts = append(parts, cur.String())
	for _, part := range parts {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		n, v, ok := strings.Cut(part, "=")
		n = strings.TrimSpace(n)
		if !ok || n == "" || strings.ContainsAny(n, " \t'\"") {
			im.note(psrc(p), "not translated: %q is not name='value'", part)
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
			v = v[1 : len(v)-1]
		}
		if i := slices.Index(keys, n); i >= 0 {
			vals[i] = config.TOMLString(v)
			continue
		}
		keys, vals = append(keys, n), append(vals, config.TOMLString(v))
	}
	return keys, vals
}

// container translates CONTAINER (lib/container's syntax is LSF's):
// what xce cannot run (shifter, kubernetes, a malformed value) is noted.
func (im *importer) container(t *table, p Param) {
	v := strings.Join(strings.Fields(p.Value), " ")
	if _, err := container.Parse(v); err != nil {
		im.note(psrc(p), "not translated: %v", err)
		return
	}
	t.set("container", config.TOMLString(v), "", psrc(p))
}

// execDriver translates EXEC_DRIVER for the profile's docker container:
// xce runs its scripts as their context user, the starter with the
// runtime's command line xce builds as its arguments (lib/container),
// which LSF's own docker-*.py scripts do not take.
func (im *importer) execDriver(t *table, p Param) {
	v := strings.Join(strings.Fields(p.Value), " ")
	if _, err := container.ParseExecDriver(v); err != nil {
		im.note(psrc(p), "not translated: %v", err)
		return
	}
	t.set("exec_driver", config.TOMLString(v), "the starter gets the docker command line as its arguments: LSF's docker-*.py scripts need adapting", psrc(p))
}
