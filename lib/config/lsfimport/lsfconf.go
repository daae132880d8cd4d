package lsfimport

// What the importer takes from lsf.conf.

import (
	"net"
	"slices"
	"strconv"
	"strings"

	"xce/lib/config"
)

func (im *importer) lsfConf(f *File) {
	im.unitKB, im.unitName = 1, "KB (LSF_UNIT_FOR_LIMITS not set: LSF's default assumed)"
	var unit, masters *Param
	mbdPort := ""
	if f != nil {
		for _, p := range f.Params {
			switch p.Key {
			case "LSF_MASTER_LIST":
				masters = &p
			case "LSB_MBD_PORT":
				mbdPort = strings.Trim(p.Value, `"' `)
			case "LSF_UNIT_FOR_LIMITS":
				unit = &p
			case "LSB_MEMLIMIT_ENFORCE", "LSB_JOB_MEMLIMIT", "LSB_STDOUT_DIRECT":
				im.lsfConfFlag(p)
			case "LSF_PROCESS_TRACKING", "LSF_LINUX_CGROUP_ACCT":
				im.cgroupFlag(p)
			case "LSB_RESOURCE_ENFORCE":
				im.resourceEnforce(p)
			case "LSB_GPU_REQ":
				im.gpuReq(im.cluster, p)
			default:
				im.rcConf(p)
			}
		}
	}
	if masters != nil {
		im.masterList(*masters, mbdPort)
	}
	if unit == nil {
		where := "lsf.conf"
		if f != nil {
			where = f.Name
		}
		im.unitSrc = src{where, 0, "LSF_UNIT_FOR_LIMITS"}
		im.note(im.unitSrc, "not found; memory limits (MEMLIMIT, Limit MEM) and bare memory amounts in resource requirements are taken as KB, LSF's default")
		im.cluster.set("unit_for_limits", config.TOMLString("KB"), "LSF's default (LSF_UNIT_FOR_LIMITS not set)", im.unitSrc)
		return
	}
	im.unitSrc = psrc(*unit)
	u := strings.ToUpper(strings.Trim(unit.Value, `"' `))
	kb := map[string]int64{"KB": 1, "MB": 1 << 10, "GB": 1 << 20, "TB": 1 << 30, "PB": 1 << 40, "EB": 1 << 50}[u]
	if kb == 0 {
		im.note(psrc(*unit), "unknown unit %q; memory limits are taken as KB, LSF's default", unit.Value)
		im.cluster.set("unit_for_limits", config.TOMLString("KB"), "LSF's default", im.unitSrc)
		return
	}
	im.unitKB, im.unitName = kb, u+" (LSF_UNIT_FOR_LIMITS)"
	// The unit governs bare amounts in rusage[mem=] and select[mem>] too.
	im.cluster.set("unit_for_limits", config.TOMLString(u), "", im.unitSrc)
}

// masterList translates LSF_MASTER_LIST into the controller candidates,
// each at mbatchd's port (LSB_MBD_PORT, else LSF's default 6881). One
// host is a single controller: no candidates.
func (im *importer) masterList(p Param, mbdPort string) {
	hosts := List(strings.Trim(p.Value, `"'`))
	if len(hosts) < 2 {
		return
	}
	comment := "LSF_MASTER_LIST at LSB_MBD_PORT"
	if mbdPort == "" {
		mbdPort, comment = "6881", "LSF_MASTER_LIST at LSF's default mbatchd port (LSB_MBD_PORT not set)"
	}
	if n, err := strconv.Atoi(mbdPort); err != nil || n <= 0 || n > 65535 {
		im.note(psrc(p), "not translated: LSB_MBD_PORT %q is not a port", mbdPort)
		return
	}
	var addrs []string
	for _, h := range hosts {
		addrs = append(addrs, net.JoinHostPort(h, mbdPort))
	}
	im.cluster.set("controllers", tomlList(addrs), comment, psrc(p))
}

// lsfConfFlag translates one of lsf.conf's y/n switches that xce.toml has.
func (im *importer) lsfConfFlag(p Param) {
	key := map[string]string{"LSB_MEMLIMIT_ENFORCE": "memlimit_enforce", "LSB_JOB_MEMLIMIT": "job_memlimit",
		"LSB_STDOUT_DIRECT": "stdout_direct"}[p.Key]
	switch strings.ToLower(strings.Trim(p.Value, `"' `)) {
	case "y", "yes":
		im.cluster.set(key, "true", "", psrc(p))
	case "n", "no", "":
		// LSF's default, which xce.toml's is too.
	default:
		im.note(psrc(p), "not translated: %q is neither y nor n", p.Value)
	}
}

// cgroupFlag translates LSF_PROCESS_TRACKING and LSF_LINUX_CGROUP_ACCT.
// Both default to N in LSF but to true in xce.toml (wherever the worker
// can make cgroups), so N is written out and an unset key is left to
// xce's default.
func (im *importer) cgroupFlag(p Param) {
	key := map[string]string{"LSF_PROCESS_TRACKING": "process_tracking", "LSF_LINUX_CGROUP_ACCT": "cgroup_acct"}[p.Key]
	switch strings.ToLower(strings.Trim(p.Value, `"' `)) {
	case "y", "yes":
		im.cluster.set(key, "true", "", psrc(p))
	case "n", "no":
		im.cluster.set(key, "false", "", psrc(p))
	case "":
	default:
		im.note(psrc(p), "not translated: %q is neither y nor n", p.Value)
	}
}

// resourceEnforce translates LSB_RESOURCE_ENFORCE="memory cpu gpu"; a
// word xce does not know is noted and left out.
func (im *importer) resourceEnforce(p Param) {
	var out []string
	for _, w := range strings.Fields(strings.Trim(p.Value, `"' `)) {
		w = strings.ToLower(w)
		switch {
		case !slices.Contains(config.Enforceable, w):
			im.note(psrc(p), "%q not translated: xce enforces memory, cpu and gpu", w)
		case !slices.Contains(out, w):
			out = append(out, w)
		}
	}
	if len(out) > 0 {
		im.cluster.set("resource_enforce", tomlList(out), "", psrc(p))
	}
}

// memory converts an LSF memory limit (in LSF_UNIT_FOR_LIMITS) to TOML.
func (im *importer) memory(v string) (config.Memory, bool) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f*float64(im.unitKB) > 1<<53 {
		return 0, false
	}
	return config.Memory(f*float64(im.unitKB) + 0.5), true
}

// badName notes a name xce refuses; reserved says whether the words
// all, others, none, default, lower and higher are refused too.
func (im *importer) badName(at src, name string, reserved bool) bool {
	switch {
	case !config.ValidName(name):
		im.note(at, "not translated: %q is not a valid xce name (letters, digits, '_', '-', '.' and '@'; no blanks)", name)
	case reserved && config.ReservedName(name):
		im.note(at, "not translated: %q is a reserved word in xce.toml", name)
	default:
		return false
	}
	return true
}
