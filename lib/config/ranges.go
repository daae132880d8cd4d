package config

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"xce/lib/resreq"
)

// MaxInt32 is the largest count xce.toml may hold: counts travel as int32
// (lib/api), and a larger one would wrap into a negative number or into
// 0, which means no limit.
const MaxInt32 = 1<<31 - 1

// MaxNameLen bounds names (cluster, hosts, groups, queues, profiles,
// projects, users, resources): LSF's MAX_LSF_NAME_LEN is 64 and its
// host names are at most 64 bytes (MAXHOSTNAMELEN); xce allows 255, a
// DNS name's length, so that any name LSF takes is taken.
const MaxNameLen = 255

// checkRanges checks every integer of the configuration against MaxInt32
// (and MinInt32), and every name against MaxNameLen, naming the key.
func (c *Config) checkRanges(k *checker) {
	checkInts(k, "", reflect.ValueOf(c).Elem())
	long := func(key, name string) {
		if len(name) > MaxNameLen {
			k.add(key, "a name of %d bytes is too long (at most %d)", len(name), MaxNameLen)
		} else if !utf8.ValidString(name) {
			k.add(key, "%q is not valid UTF-8", name)
		}
	}
	long("cluster.name", c.Cluster.Name)
	if strings.ContainsAny(c.Cluster.Name, "/ \t\n\r\x00") {
		k.add("cluster.name", "%q: a cluster name has no blanks or '/'", c.Cluster.Name)
	}
	for sec, names := range map[string][]string{
		"hosts": slices.Collect(maps.Keys(c.Hosts)), "host_groups": slices.Collect(maps.Keys(c.HostGroups)),
		"user_groups": slices.Collect(maps.Keys(c.UserGroups)), "queues": slices.Collect(maps.Keys(c.Queues)),
		"apps": slices.Collect(maps.Keys(c.Apps)), "projects": slices.Collect(maps.Keys(c.Projects)),
		"users": slices.Collect(maps.Keys(c.Users)), "resources": slices.Collect(maps.Keys(c.Resources)),
	} {
		slices.Sort(names)
		for _, n := range names {
			if len(n) > MaxNameLen {
				k.add(sec+"."+n[:32]+"...", "a name of %d bytes is too long (at most %d)", len(n), MaxNameLen)
			}
		}
	}
}

// checkInts walks v (a struct, map or slice of the configuration) and
// reports each int outside int32's range under its TOML key.
func checkInts(k *checker, key string, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			checkInts(k, key, v.Elem())
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if !f.IsExported() || name == "" || name == "-" {
				continue
			}
			checkInts(k, join(key, name), v.Field(i))
		}
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		for _, mk := range keys {
			checkInts(k, join(key, mk.String()), v.MapIndex(mk))
		}
	case reflect.Interface:
		if !v.IsNil() {
			checkInts(k, key, v.Elem())
		}
	case reflect.Int, reflect.Int64:
		// Memory and Duration are int64 of their own types, bounded
		// where they are read.
		if v.Type() == memoryType || v.Type() == durationType {
			return
		}
		if n := v.Int(); n > MaxInt32 || n < -MaxInt32-1 {
			k.add(key, "%d is out of range (at most %d)", n, MaxInt32)
		}
	}
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// memUnit is cluster.unit_for_limits as a resreq unit; NoUnit for MB,
// which resreq assumes.
func (c *Config) memUnit(k *checker) resreq.Unit {
	u := c.Cluster.UnitForLimits
	if u == "" {
		return resreq.NoUnit
	}
	unit, ok := resreq.ParseUnit(u)
	if !ok || len(u) != 2 || unit == resreq.ZB {
		k.add("cluster.unit_for_limits", "%q: use KB, MB, GB, TB, PB or EB", u)
		return resreq.NoUnit
	}
	if unit == resreq.MB {
		return resreq.NoUnit
	}
	return unit
}
