package config

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Limit is one [[limits]] entry: an lsb.resources Limit section. A job
// counts against it when it matches every consumer list given (users,
// queues, hosts, projects, apps, lic_projects); a per_* list makes one
// limit for each of its members instead. A resource left out is not
// limited.
type Limit struct {
	Name          string   `toml:"name"`
	Users         []string `toml:"users"`
	PerUser       []string `toml:"per_user"`
	Queues        []string `toml:"queues"`
	PerQueue      []string `toml:"per_queue"`
	Hosts         []string `toml:"hosts"`
	PerHost       []string `toml:"per_host"`
	Projects      []string `toml:"projects"`
	PerProject    []string `toml:"per_project"`
	Apps          []string `toml:"apps"`
	PerApp        []string `toml:"per_app"`
	LicProjects   []string `toml:"lic_projects"`
	PerLicProject []string `toml:"per_lic_project"`

	Slots             *int    `toml:"slots"`
	SlotsPerProcessor float64 `toml:"slots_per_processor"`
	// Mem, Swp and Tmp: an amount ("10G", "512MB"; a bare number is MB,
	// LSF's unit for limits) or a percentage of each host's maxmem,
	// maxswp, maxtmp ("20%", per_host only).
	Mem       any                `toml:"mem"`
	Swp       any                `toml:"swp"`
	Tmp       any                `toml:"tmp"`
	Jobs      *int               `toml:"jobs"`
	Resources map[string]float64 `toml:"resources"`

	// Amounts are Mem, Swp, Tmp checked: MB, or a percentage.
	Amounts map[string]LimitAmount `toml:"-"`
}

// LimitAmount is a memory-like limit: MB, or a percentage of each
// host's maximum.
type LimitAmount struct {
	MB      float64
	Percent float64 // > 0: a percentage
}

// String writes the amount as xce.toml and blimits -c do: "20%", "10240".
func (a LimitAmount) String() string {
	if a.Percent > 0 {
		return strconv.FormatFloat(a.Percent, 'f', -1, 64) + "%"
	}
	return strconv.FormatFloat(a.MB, 'f', -1, 64)
}

// maxLimit bounds the integer limits (LSF keeps them in an int).
const maxLimit = math.MaxInt32

func (c *Config) checkLimits(k *checker) {
	seen := map[string]int{}
	for i, l := range c.Limits {
		key := fmt.Sprintf("limits.%d", i)
		switch {
		case l.Name == "":
			k.add(key+".name", "a limit needs a name")
		case !ValidName(l.Name):
			k.add(key+".name", "%q is not a valid name: use letters, digits, '_', '-', '.' and '@' (no blanks)", l.Name)
		default:
			if j, dup := seen[l.Name]; dup {
				k.add(key+".name", "limit %s is defined twice (first as limits.%d)", l.Name, j)
			}
			seen[l.Name] = i
		}
		pairs := []struct {
			plain, per    string
			a, b          []string
			hosts, queues bool
			apps          bool
		}{
			{"users", "per_user", l.Users, l.PerUser, false, false, false},
			{"queues", "per_queue", l.Queues, l.PerQueue, false, true, false},
			{"hosts", "per_host", l.Hosts, l.PerHost, true, false, false},
			{"projects", "per_project", l.Projects, l.PerProject, false, false, false},
			{"apps", "per_app", l.Apps, l.PerApp, false, false, true},
			{"lic_projects", "per_lic_project", l.LicProjects, l.PerLicProject, false, false, false},
		}
		for _, p := range pairs {
			if len(p.a) > 0 && len(p.b) > 0 && p.plain != "hosts" {
				k.add(key+"."+p.per, "%s and %s cannot both be set in one limit (LSF: use one or the other)", p.plain, p.per)
			}
			for _, list := range []struct {
				name  string
				items []string
			}{{p.plain, p.a}, {p.per, p.b}} {
				for _, e := range list.items {
					name := strings.TrimPrefix(e, "~")
					switch {
					case p.hosts:
						if err := c.checkHostRef(e, false); err != "" {
							k.add(key+"."+list.name, "%s", err)
						}
					case name == "all":
					case !ValidName(name):
						k.add(key+"."+list.name, "%q is not a valid name", e)
					case p.queues && c.Queues[name] == nil:
						k.add(key+"."+list.name, "unknown queue %s", name)
					case p.apps && c.Apps[name] == nil:
						k.add(key+"."+list.name, "unknown application profile %s", name)
					}
				}
			}
		}
		perHost := len(l.PerHost) > 0
		limited := false
		if l.Slots != nil {
			limited = true
			if *l.Slots < 0 || *l.Slots > maxLimit {
				k.add(key+".slots", "%d: must be between 0 and %d", *l.Slots, maxLimit)
			}
		}
		if l.Jobs != nil {
			limited = true
			if *l.Jobs < 0 || *l.Jobs > maxLimit {
				k.add(key+".jobs", "%d: must be between 0 and %d", *l.Jobs, maxLimit)
			}
		}
		if l.SlotsPerProcessor != 0 {
			limited = true
			switch {
			case l.SlotsPerProcessor < 0 || l.SlotsPerProcessor > 1e6 || math.IsNaN(l.SlotsPerProcessor):
				k.add(key+".slots_per_processor", "%g: must be positive and at most 1000000", l.SlotsPerProcessor)
			case !perHost:
				k.add(key+".slots_per_processor", "needs per_host: the limit is per processor of each host")
			}
		}
		l.Amounts = map[string]LimitAmount{}
		for _, m := range []struct {
			name string
			v    any
		}{{"mem", l.Mem}, {"swp", l.Swp}, {"tmp", l.Tmp}} {
			if m.v == nil {
				continue
			}
			limited = true
			a, err := parseLimitAmount(m.v)
			switch {
			case err != nil:
				k.add(key+"."+m.name, "%v", err)
			case a.Percent > 0 && !perHost:
				k.add(key+"."+m.name, "%s: a percentage needs per_host (it is of each host's max%s)", a, m.name)
			default:
				l.Amounts[m.name] = a
			}
		}
		for _, r := range sortedKeys(l.Resources) {
			limited = true
			v := l.Resources[r]
			res := c.Resources[r]
			switch {
			case res == nil:
				k.add(key+".resources."+r, "unknown resource %s (declare it under [resources])", r)
			case res.Type != "numeric":
				k.add(key+".resources."+r, "%s is a %s resource; only numeric resources can be limited", r, res.Type)
			}
			if v < 0 || v > maxLimit || math.IsNaN(v) {
				k.add(key+".resources."+r, "%g: must be between 0 and %d", v, maxLimit)
			}
		}
		if !limited && l.Name != "" {
			k.add(key, "limit %s limits nothing: set slots, slots_per_processor, mem, swp, tmp, jobs or resources", l.Name)
		}
	}
}

// parseLimitAmount reads a mem, swp or tmp limit: a number (MB), a size
// with a unit, or a percentage.
func parseLimitAmount(v any) (LimitAmount, error) {
	var s string
	switch x := v.(type) {
	case int64:
		s = strconv.FormatInt(x, 10)
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		s = strings.TrimSpace(x)
	default:
		return LimitAmount{}, fmt.Errorf("expected an amount such as \"10GB\", a number of MB or a percentage such as \"20%%\"")
	}
	if p, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || f <= 0 || f > 100 {
			return LimitAmount{}, fmt.Errorf("%q: a percentage must be above 0 and at most 100", s)
		}
		return LimitAmount{Percent: f}, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 || f > 1<<40 || math.IsNaN(f) {
			return LimitAmount{}, fmt.Errorf("%s: must be between 0 and %d MB", s, int64(1)<<40)
		}
		return LimitAmount{MB: f}, nil
	}
	var m Memory
	if err := m.UnmarshalText([]byte(s)); err != nil {
		return LimitAmount{}, err
	}
	return LimitAmount{MB: float64(m) / 1024}, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
