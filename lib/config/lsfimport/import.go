package lsfimport

import (
	"cmp"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"xce/lib/requeue"

	"xce/lib/config"
	"xce/lib/gpu"
	"xce/lib/hostlist"
	"xce/lib/resreq"
)

// The files Import reads, in the order it reads them.
var knownFiles = []string{"lsf.conf", "lsf.shared", "lsf.cluster.*", "lsb.params", "lsb.hosts", "lsb.users", "lsb.queues", "lsb.applications", "lsb.resources"}

type importer struct {
	dir   string
	notes []Note
	d     *doc

	unitKB   int64  // KB per LSF_UNIT_FOR_LIMITS unit
	unitName string // "MB", or "KB (assumed)"

	cluster *table
	res     map[string]*resInfo
	hosts   map[string]*hostInfo
	hostOrd []string
	hgroups map[string]bool
	// hgroupNames are the names of lsb.hosts, known before the groups
	// are translated so that a group may name one defined after it.
	hgroupNames map[string]bool
	queues      []*queueInfo
	apps        map[string]bool

	limitNames map[string]bool    // the [[limits]] names given
	models     map[string]float64 // HostModel CPUFACTOR by model
	modelSrc   map[string]src

	defaultQueue *Param
	defaultApp   *Param
	resreqs      int // resource requirements copied
	unitSrc      src // where LSF_UNIT_FOR_LIMITS is (or would be)
}

type resInfo struct {
	t    *table
	kind string // "boolean", "numeric", "string"
}

type hostInfo struct {
	t         *table
	attrs     []string
	resKeys   []string
	resVals   []string
	slots     int64
	slotsFrom src
}

type queueInfo struct {
	name    string
	prio    int
	t       *table
	preempt *Param
}

// Import reads the LSF configuration directory dir and returns the
// equivalent xce.toml and a note for every key it did not translate (or
// translated with a caveat), sorted by file and line. err is set only when
// dir cannot be read or holds no LSF configuration file.
func Import(dir string) (tomlText string, report []Note, err error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", nil, err
	}
	im := &importer{dir: dir, d: &doc{}, res: map[string]*resInfo{}, hosts: map[string]*hostInfo{},
		hgroups: map[string]bool{}, hgroupNames: map[string]bool{}, apps: map[string]bool{}, limitNames: map[string]bool{},
		models: map[string]float64{}, modelSrc: map[string]src{}}
	files := im.locate(ents)
	if len(files) == 0 {
		return "", nil, fmt.Errorf("%s: no LSF configuration files (lsf.shared, lsf.cluster.NAME, lsb.queues, ...)", dir)
	}
	im.cluster = im.d.table("", src{}, "cluster")
	read := func(name string) *File {
		rel, ok := files[name]
		if !ok {
			return nil
		}
		f, notes, err := ReadFile(filepath.Join(dir, rel), rel)
		im.notes = append(im.notes, notes...)
		if err != nil {
			im.notes = append(im.notes, Note{File: rel, Msg: "cannot be read: " + err.Error(), Loss: true})
			return nil
		}
		return f
	}
	im.lsfConf(read("lsf.conf"))
	shared := read("lsf.shared")
	clusterName := im.lsfShared(shared)
	clusterFile := im.pickClusterFile(files, clusterName)
	if clusterFile != "" {
		im.lsfCluster(read(clusterFile), strings.TrimPrefix(clusterFile, "lsf.cluster."), clusterName == "")
	}
	im.lsbParams(read("lsb.params"))
	im.lsbHosts(read("lsb.hosts"))
	im.finishHosts()
	im.lsbUsers(read("lsb.users"))
	im.lsbQueues(read("lsb.queues"))
	im.lsbApplications(read("lsb.applications"))
	im.lsbResources(read("lsb.resources"))
	im.finish()
	im.notes = append(im.notes, im.d.settle()...)
	slices.SortStableFunc(im.notes, func(a, b Note) int {
		return cmp.Or(cmp.Compare(fileRank(a.File), fileRank(b.File)), cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
	return im.d.String(), im.notes, nil
}

// fileRank orders notes as Import reads the files.
func fileRank(name string) int {
	base := filepath.Base(name)
	for i, k := range knownFiles {
		if ok, _ := filepath.Match(k, base); ok {
			return i
		}
	}
	return len(knownFiles)
}

// locate finds the files to read: in dir itself, or for lsb.* files in
// LSF's layout dir/lsbatch/CLUSTER/configdir. It returns the path of each
// relative to dir, keyed by its name ("lsf.cluster.NAME" as it is), and
// notes the lsf.* and lsb.* files it will not read.
func (im *importer) locate(ents []os.DirEntry) map[string]string {
	files := map[string]string{}
	add := func(sub string, ents []os.DirEntry) {
		for _, e := range ents {
			n := e.Name()
			if e.IsDir() || !strings.HasPrefix(n, "lsf.") && !strings.HasPrefix(n, "lsb.") {
				continue
			}
			rel := filepath.Join(sub, n)
			if _, dup := files[n]; dup {
				im.notes = append(im.notes, Note{File: rel, Msg: "not read: " + files[n] + " is read instead"})
				continue
			}
			known := slices.ContainsFunc(knownFiles, func(k string) bool { ok, _ := filepath.Match(k, n); return ok })
			if !known {
				im.notes = append(im.notes, Note{File: rel, Msg: "not read: xce.toml has no equivalent of this file"})
				continue
			}
			files[n] = rel
		}
	}
	add("", ents)
	if subs, _ := filepath.Glob(filepath.Join(im.dir, "lsbatch", "*", "configdir")); len(subs) > 0 {
		for _, s := range subs {
			if ents, err := os.ReadDir(s); err == nil {
				rel, _ := filepath.Rel(im.dir, s)
				add(rel, ents)
			}
		}
	}
	return files
}

func (im *importer) pickClusterFile(files map[string]string, name string) string {
	var all []string
	for n := range files {
		if strings.HasPrefix(n, "lsf.cluster.") {
			all = append(all, n)
		}
	}
	slices.Sort(all)
	pick := ""
	switch {
	case len(all) == 0:
		return ""
	case name != "" && files["lsf.cluster."+name] != "":
		pick = "lsf.cluster." + name
	default:
		pick = all[0]
	}
	for _, n := range all {
		if n != pick {
			im.notes = append(im.notes, Note{File: files[n], Msg: "not read: the cluster's file is " + files[pick]})
		}
	}
	return pick
}

func (im *importer) note(s src, format string, a ...any) {
	im.notes = append(im.notes, Note{File: s.file, Line: s.line, Key: s.key, Msg: fmt.Sprintf(format, a...)})
}

// loss reports what is not translated and changes who may run what.
func (im *importer) loss(s src, format string, a ...any) {
	im.notes = append(im.notes, Note{File: s.file, Line: s.line, Key: s.key, Msg: fmt.Sprintf(format, a...), Loss: true})
}

func psrc(p Param) src { return src{p.File, p.Line, p.Key} }

// sectionNote reports a section that is not translated.
func (im *importer) sectionNote(s *Section, why string) {
	im.note(src{s.File, s.Line, "Begin " + s.Name}, "section not translated: %s", why)
}

// notTranslated reports a key with the reason from reasons, or a generic
// one.
func (im *importer) notTranslated(p Param, reasons map[string]string) {
	why := reasons[strings.ToUpper(p.Key)]
	if why == "" {
		why = "xce.toml has no equivalent"
	}
	im.note(psrc(p), "not translated: %s", why)
}

// ---- lsf.conf

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
			case "LSB_GPU_REQ":
				im.gpuReq(im.cluster, p)
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

// memory converts an LSF memory limit (in LSF_UNIT_FOR_LIMITS) to TOML.
func (im *importer) memory(v string) (config.Memory, bool) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f*float64(im.unitKB) > 1<<53 {
		return 0, false
	}
	return config.Memory(f*float64(im.unitKB) + 0.5), true
}

// validName mirrors lib/config's rule for names of hosts, groups, queues,
// profiles and projects, so that a name xce refuses is noted where it is
// read rather than dropped later.
func validName(s string) bool {
	if s == "" || strings.HasPrefix(s, "~") || strings.HasPrefix(s, "-") {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f || strings.ContainsRune(`"'\#:=[](){}+,;*?~`, r) {
			return false
		}
	}
	return true
}

var reservedNames = map[string]bool{"all": true, "others": true, "none": true, "default": true, "lower": true, "higher": true}

// badName notes a name xce refuses; reserved says whether the words
// all, others, none, default, lower and higher are refused too.
func (im *importer) badName(at src, name string, reserved bool) bool {
	switch {
	case !validName(name):
		im.note(at, "not translated: %q is not a valid xce name (letters, digits, '_', '-', '.' and '@'; no blanks)", name)
	case reserved && reservedNames[name]:
		im.note(at, "not translated: %q is a reserved word in xce.toml", name)
	default:
		return false
	}
	return true
}

// ---- lsf.shared

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
		if v, _ := s.Get(r, "CONSUMABLE"); yes(v) {
			if kind == "numeric" {
				t.set("consumable", "true", "", at)
			} else {
				im.note(src{r.File, r.Line, "CONSUMABLE"}, "not translated for %s: only a numeric resource can be consumable", name)
			}
		}
		if v, _ := s.Get(r, "INTERVAL"); !Empty(v) {
			im.note(src{r.File, r.Line, "INTERVAL"}, "not translated for %s: xce runs no ELIM; the resource is static, with the values the configuration gives", name)
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

// ---- lsf.cluster.NAME

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
				im.note(at, "not translated: %s has no value; in LSF it comes from an ELIM, which xce does not run", it)
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

// ---- lsb.params

var paramsReasons = map[string]string{
	"JOB_TERMINATE_INTERVAL":  "use xced --terminate-interval",
	"MBD_SLEEP_TIME":          "xce schedules when something changes, not on a timer",
	"SBD_SLEEP_TIME":          "xce workers report continuously",
	"JOB_SCHEDULING_INTERVAL": "xce schedules when something changes, not on a timer",
	"MAX_JOBID":               "xce job IDs do not wrap",
	"MAX_JOB_NUM":             "xce keeps finished jobs for clean_period",
	"DEFAULT_HOST_SPEC":       "xce has no CPU factors; run limits are wall-clock",
	"ABS_RUNLIMIT":            "xce run limits are always wall-clock",
	"ACCT_ARCHIVE_SIZE":       "xce keeps accounting records for acct_retention, not in files",
	"ACCT_ARCHIVE_TIME":       "xce keeps accounting records for acct_retention, not in files",
}

func (im *importer) lsbParams(f *File) {
	if f == nil {
		return
	}
	var archiveAge, archiveFiles *Param
	cleanPeriod := int64(3600)
	for _, s := range f.Sections {
		if !strings.EqualFold(s.Name, "Parameters") {
			im.sectionNote(s, "xce.toml has no equivalent")
			continue
		}
		for _, p := range s.Params {
			switch strings.ToUpper(p.Key) {
			case "ACCT_ARCHIVE_AGE":
				archiveAge = &p
			case "MAX_ACCT_ARCHIVE_FILE":
				archiveFiles = &p
			case "DEFAULT_QUEUE":
				im.defaultQueue = &p
			case "DEFAULT_APPLICATION":
				im.defaultApp = &p
			case "DEFAULT_PROJECT":
				im.cluster.set("default_project", config.TOMLString(p.Value), "", psrc(p))
			case "CLEAN_PERIOD":
				n, err := strconv.ParseInt(p.Value, 10, 64)
				if err != nil || n <= 0 {
					im.note(psrc(p), "not translated: %q is not a positive number of seconds", p.Value)
					continue
				}
				cleanPeriod = n
				im.cluster.set("clean_period", config.TOMLString(config.Duration(n).String()), fmt.Sprintf("CLEAN_PERIOD %d s", n), psrc(p))
			case "GPU_REQ_MERGE":
				switch strings.ToUpper(strings.Trim(p.Value, `"' `)) {
				case "Y", "YES":
					im.cluster.set("gpu_req_merge", "true", "", psrc(p))
				case "N", "NO", "":
				default:
					im.note(psrc(p), "not translated: %q is neither Y nor N", p.Value)
				}
			case "ORPHAN_JOB_TERM_GRACE_PERIOD":
				n, err := strconv.ParseInt(p.Value, 10, 64)
				if err != nil || n < 0 {
					im.note(psrc(p), "not translated: %q is not a number of seconds", p.Value)
					continue
				}
				im.cluster.set("orphan_job_term_grace_period", config.TOMLString(config.Duration(n).String()), fmt.Sprintf("ORPHAN_JOB_TERM_GRACE_PERIOD %d s", n), psrc(p))
			case "EADMIN_TRIGGER_DURATION":
				n, err := strconv.ParseInt(p.Value, 10, 64)
				if err != nil || n <= 0 {
					im.note(psrc(p), "not translated: %q is not a positive number of minutes", p.Value)
					continue
				}
				im.cluster.set("eadmin_trigger_duration", config.TOMLString(config.Duration(n*60).String()), fmt.Sprintf("EADMIN_TRIGGER_DURATION %d min", n), psrc(p))
			case "MAX_JOB_ARRAY_SIZE":
				n, err := strconv.ParseInt(p.Value, 10, 64)
				if err != nil || n < 1 || n > 2147483646 {
					im.note(psrc(p), "not translated: %q is not a number from 1 to 2147483646", p.Value)
					continue
				}
				im.cluster.set("max_array_size", tomlInt(n), "", psrc(p))
			case "LOCAL_MAX_PREEXEC_RETRY":
				n, err := strconv.ParseInt(p.Value, 10, 64)
				if err != nil || n < 1 || n > 2147483647 {
					im.note(psrc(p), "not translated: %q is not a number from 1 to 2147483647", p.Value)
					continue
				}
				if n == 2147483647 {
					n = 0 // LSF's "unlimited"
				}
				im.cluster.set("local_max_preexec_retry", tomlInt(n), "", psrc(p))
			case "LOCAL_MAX_PREEXEC_RETRY_ACTION":
				switch a := strings.ToLower(p.Value); a {
				case "suspend", "exit":
					im.cluster.set("local_max_preexec_retry_action", config.TOMLString(a), "", psrc(p))
				default:
					im.note(psrc(p), "not translated: %q is neither SUSPEND nor EXIT", p.Value)
				}
			case "MAX_USER_PRIORITY":
				n, err := strconv.ParseInt(p.Value, 10, 64)
				if err != nil || n < 1 || n > maxInt32 {
					im.loss(psrc(p), "not translated: %q is not a number from 1 to %d; bsub -sp stays off", p.Value, maxInt32)
					continue
				}
				im.cluster.set("max_user_priority", tomlInt(n), "", psrc(p))
			case "MAX_PEND_JOBS":
				n, err := strconv.ParseInt(p.Value, 10, 64)
				if err != nil || n < 1 || n > 2147483647 {
					im.note(psrc(p), "not translated: %q is not a number from 1 to 2147483647", p.Value)
					continue
				}
				if n < 2147483647 { // LSF's "unlimited"
					im.cluster.set("max_pend_jobs", tomlInt(n), "", psrc(p))
				}
			default:
				im.notTranslated(p, paramsReasons)
			}
		}
	}
	im.acctArchive(archiveAge, archiveFiles, cleanPeriod)
}

// acctArchive translates LSF's accounting archive settings: lsb.acct is
// archived every ACCT_ARCHIVE_AGE days and MAX_ACCT_ARCHIVE_FILE archives
// are kept, so a record is gone after age x (files + 1) days at most; that
// is acct_retention. Either alone bounds nothing and is noted.
func (im *importer) acctArchive(age, files *Param, cleanPeriod int64) {
	const why = "acct_retention needs both ACCT_ARCHIVE_AGE and MAX_ACCT_ARCHIVE_FILE (records are gone after age x (files + 1) days)"
	switch {
	case age == nil && files == nil:
		return
	case age == nil:
		im.note(psrc(*files), "not translated: %s", why)
		return
	case files == nil:
		im.note(psrc(*age), "not translated: %s", why)
		return
	}
	days, err1 := strconv.ParseInt(age.Value, 10, 64)
	n, err2 := strconv.ParseInt(files.Value, 10, 64)
	switch {
	case err1 != nil || days <= 0 || days > 36500:
		im.note(psrc(*age), "not translated: %q is not a number of days from 1 to 36500", age.Value)
		return
	case err2 != nil || n <= 0 || n > 10000:
		im.note(psrc(*files), "not translated: %q is not a number of files from 1 to 10000", files.Value)
		return
	}
	keep := days * (n + 1) * 24 * 3600
	if keep < cleanPeriod {
		im.note(psrc(*age), "not translated: %d days x (%d + 1) is shorter than the clean period", days, n)
		return
	}
	im.cluster.set("acct_retention", config.TOMLString(config.Duration(keep).String()),
		fmt.Sprintf("ACCT_ARCHIVE_AGE %d days x (MAX_ACCT_ARCHIVE_FILE %d + 1)", days, n), psrc(*age))
}

// ---- lsb.hosts

func (im *importer) lsbHosts(f *File) {
	if f == nil {
		return
	}
	var groups []*Section
	for _, s := range f.Sections {
		switch strings.ToUpper(s.Name) {
		case "HOST":
			im.batchHosts(s)
		case "HOSTGROUP":
			groups = append(groups, s)
		case "COMPUTEUNIT":
			im.sectionNote(s, "xce has no compute units")
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

// ---- lsb.users

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
						if err == nil && n >= 0 && n <= maxInt32 && validName(g) {
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

// ---- lsb.queues

// withJobLimits adds to a section's reasons those of the resource limits
// xce takes from the job only (bsub -c -v -F -D -S -C -p -T): a queue or
// profile cannot set them.
func withJobLimits(m map[string]string) map[string]string {
	for _, k := range []string{"CPULIMIT", "SWAPLIMIT", "FILELIMIT", "DATALIMIT", "STACKLIMIT", "CORELIMIT", "PROCESSLIMIT", "THREADLIMIT"} {
		m[k] = "xce takes this limit from the job only (bsub -c, -v, -F, -D, -S, -C, -p, -T), not from a queue or profile"
	}
	return m
}

var queueReasons = withJobLimits(map[string]string{
	"JOB_STARTER":       "a job starter belongs to an application profile in xce (apps.NAME.job_starter)",
	"HOST_PRE_EXEC":     "xce has no per-host pre/post-exec",
	"HOST_POST_EXEC":    "xce has no per-host pre/post-exec",
	"DEFAULT_HOST_SPEC": "xce has no CPU factors; run limits are wall-clock",
	"FAIRSHARE_QUEUES":  "xce has no cross-queue fair share",
	"SLOT_POOL":         "xce has no slot pools",
	"SLOT_SHARE":        "xce has no slot pools",
})

func (im *importer) lsbQueues(f *File) {
	if f == nil {
		return
	}
	for _, s := range f.Sections {
		if !strings.EqualFold(s.Name, "Queue") {
			im.sectionNote(s, "xce.toml has no equivalent")
			continue
		}
		im.queue(s)
	}
}

func (im *importer) queue(s *Section) {
	np, ok := s.Param("QUEUE_NAME")
	if !ok || np.Value == "" {
		im.note(src{s.File, s.Line, "Begin Queue"}, "not translated: the queue has no QUEUE_NAME")
		return
	}
	name := np.Value
	if im.badName(psrc(np), name, false) {
		return
	}
	for _, q := range im.queues {
		if q.name == name {
			im.note(psrc(np), "not translated: queue %s is defined twice; the first is kept", name)
			return
		}
	}
	q := &queueInfo{name: name, prio: 1}
	q.t = im.d.table(fileLine(s.File, s.Line), psrc(np), "queues", name)
	im.queues = append(im.queues, q)
	t := q.t
	const deprecated = "deprecated: queue-level %s is honoured for compatibility; move it to an application profile"
	for _, p := range s.Params {
		at := psrc(p)
		k := strings.ToUpper(p.Key)
		switch k {
		case "QUEUE_NAME":
		case "DESCRIPTION":
			t.set("description", config.TOMLString(strings.Join(strings.Fields(p.Value), " ")), "", at)
		case "PRIORITY", "QJOB_LIMIT", "UJOB_LIMIT", "HJOB_LIMIT":
			n, err := strconv.ParseInt(p.Value, 10, 64)
			if err != nil || n <= 0 || n > maxInt32 {
				if k == "PRIORITY" {
					im.note(at, "not translated: %q is not an integer from 1 to %d", p.Value, maxInt32)
				} else {
					im.loss(at, "not translated: %q is not an integer from 1 to %d", p.Value, maxInt32)
				}
				continue
			}
			key := map[string]string{"PRIORITY": "priority", "QJOB_LIMIT": "max_slots", "UJOB_LIMIT": "max_slots_per_user", "HJOB_LIMIT": "max_slots_per_host"}[k]
			t.set(key, tomlInt(n), "", at)
			if k == "PRIORITY" {
				q.prio = int(n)
			}
		case "NICE":
			n, err := strconv.ParseInt(p.Value, 10, 64)
			if err != nil {
				im.note(at, "not translated: %q is not an integer", p.Value)
				continue
			}
			t.set("nice", tomlInt(n), "", at)
		case "JOB_OVERRUN", "JOB_UNDERRUN":
			n, err := strconv.ParseInt(p.Value, 10, 64)
			if err != nil || n <= 0 {
				im.note(at, "not translated: %q is not a positive number of minutes", p.Value)
				continue
			}
			t.set(strings.ToLower(k), config.TOMLString(config.Duration(n*60).String()), fmt.Sprintf("%s %d min", k, n), at)
		case "JOB_IDLE":
			f, err := strconv.ParseFloat(p.Value, 64)
			if err != nil || f <= 0 || f > 1 {
				im.note(at, "not translated: %q is not a number from 0 to 1", p.Value)
				continue
			}
			t.set("job_idle", strconv.FormatFloat(f, 'f', -1, 64), "", at)
		case "USERS", "ADMINISTRATORS":
			t.set(strings.ToLower(k), tomlList(List(p.Value)), "", at)
		case "HOSTS":
			list := List(p.Value)
			hosts := im.hostRefs(list, true, at, name)
			if len(hosts) == 0 && len(list) > 0 {
				im.loss(at, "not translated: none of the hosts is known; the queue would get xce's default, all hosts")
			}
			t.set("hosts", tomlList(hosts), "", at)
		case "TASKLIMIT", "PROCLIMIT":
			im.tasks(t, p)
		case "MEMLIMIT":
			vals := strings.Fields(p.Value)
			if len(vals) > 2 {
				im.note(at, "not translated: expected [default] max")
				continue
			}
			keys := []string{"max_mem"}
			if len(vals) == 2 {
				keys = []string{"default_mem", "max_mem"}
			}
			for i, v := range vals {
				m, ok := im.memory(v)
				if !ok {
					im.note(at, "not translated: %q is not an amount of memory", v)
					continue
				}
				t.set(keys[i], config.TOMLString(m.String()), fmt.Sprintf("MEMLIMIT %s in %s", v, im.unitName), at)
			}
		case "RUNLIMIT":
			vals := strings.Fields(p.Value)
			if len(vals) > 2 {
				im.note(at, "not translated: expected [default] max")
				continue
			}
			keys := []string{"max_run_limit"}
			if len(vals) == 2 {
				keys = []string{"default_run_limit", "max_run_limit"}
			}
			for i, v := range vals {
				if d, ok := im.runLimit(at, v); ok {
					t.set(keys[i], config.TOMLString(d.String()), "RUNLIMIT "+v, at)
				}
			}
		case "RUNTIME":
			im.runtime(t, p)
		case "RUN_WINDOW", "DISPATCH_WINDOW":
			var ws []string
			for _, v := range strings.Fields(p.Value) {
				var w config.Window
				if err := w.UnmarshalText([]byte(v)); err != nil {
					im.note(at, "not translated: %v", err)
					continue
				}
				ws = append(ws, w.String())
			}
			t.set(strings.ToLower(k)+"s", tomlList(ws), "", at)
		case "RERUNNABLE":
			im.rerunnable(t, p)
		case "EXCLUSIVE":
			v := strings.ToUpper(p.Value)
			switch {
			case v == "Y" || v == "YES":
				t.set("exclusive", "true", "", at)
			case v == "N" || v == "NO":
			default:
				im.note(at, "not translated: %s: xce has no compute units; only Y or N translate", p.Value)
			}
		case "FAIRSHARE":
			im.fairshare(t, p)
		case "PREEMPTION":
			q.preempt = &p
		case "REQUEUE_EXIT_VALUES":
			im.requeue(t, p)
		case "GPU_REQ":
			im.gpuReq(t, p)
		case "INTERACTIVE":
			switch v := strings.ToUpper(strings.TrimSpace(p.Value)); v {
			case "YES", "Y":
			case "NO", "ONLY":
				t.set("interactive", config.TOMLString(strings.ToLower(v)), "", at)
			default:
				im.loss(at, "not translated: %q is not YES, NO or ONLY", p.Value)
			}
		case "PJOB_LIMIT":
			f, err := strconv.ParseFloat(p.Value, 64)
			if err != nil || f <= 0 || f > maxInt32 {
				im.loss(at, "not translated: %q is not a positive number of slots per processor", p.Value)
				continue
			}
			im.addLimit(at, "pjob_"+name, [2]string{"queues", tomlList([]string{name})},
				[2]string{"per_host", tomlList([]string{"all"})}, [2]string{"slots_per_processor", strconv.FormatFloat(f, 'f', -1, 64)})
		case "RES_REQ", "PRE_EXEC", "POST_EXEC":
			t.set(strings.ToLower(k), config.TOMLString(p.Value), "deprecated: imported from LSF; move it to an application profile", at)
			im.note(at, deprecated, k)
			if k == "RES_REQ" {
				im.resreqs++
			}
		default:
			im.notTranslated(p, queueReasons)
		}
	}
}

// tasks translates TASKLIMIT = [min [default]] max.
// gpuReq translates LSB_GPU_REQ and GPU_REQ (bsub -gpu syntax),
// checked as xce checks it.
func (im *importer) gpuReq(t *table, p Param) {
	v := strings.Trim(strings.TrimSpace(p.Value), `"'`)
	if _, err := gpu.Parse(v); err != nil {
		im.note(psrc(p), "not translated: %v", err)
		return
	}
	t.set("gpu_req", config.TOMLString(v), "", psrc(p))
}

// rerunnable translates RERUNNABLE (a queue's or a profile's).
func (im *importer) rerunnable(t *table, p Param) {
	switch strings.ToUpper(strings.TrimSpace(p.Value)) {
	case "Y", "YES":
		t.set("rerunnable", "true", "", psrc(p))
	case "N", "NO":
	default:
		im.note(psrc(p), "not translated: RERUNNABLE = %s: use yes or no", p.Value)
	}
}

// requeue translates REQUEUE_EXIT_VALUES, checked as xce checks it.
func (im *importer) requeue(t *table, p Param) {
	at := psrc(p)
	v := strings.Join(strings.Fields(p.Value), " ")
	if _, err := requeue.Parse(v); err != nil {
		im.note(at, "not translated: %v", err)
		return
	}
	t.set("requeue_exit_values", config.TOMLString(v), "", at)
}

func (im *importer) tasks(t *table, p Param) {
	vals := strings.Fields(p.Value)
	var ns []int64
	for _, v := range vals {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			im.note(psrc(p), "not translated: %q is not a positive number of tasks", v)
			return
		}
		ns = append(ns, n)
	}
	var keys []string
	switch len(ns) {
	case 1:
		keys = []string{"max_tasks"}
	case 2:
		keys = []string{"min_tasks", "max_tasks"}
	case 3:
		keys = []string{"min_tasks", "default_tasks", "max_tasks"}
	default:
		im.note(psrc(p), "not translated: expected [min [default]] max")
		return
	}
	for i, k := range keys {
		t.set(k, tomlInt(ns[i]), "", psrc(p))
	}
}

var runRE = regexp.MustCompile(`^(?:(\d+):)?(\d+)(?:/(\S+))?$`)

// runLimit reads "[hour:]minute[/host]".
func (im *importer) runLimit(at src, v string) (config.Duration, bool) {
	m := runRE.FindStringSubmatch(v)
	if m == nil {
		im.note(at, "not translated: %q is not [hour:]minute", v)
		return 0, false
	}
	h, err1 := strconv.ParseInt(cmp.Or(m[1], "0"), 10, 64)
	mins, err2 := strconv.ParseInt(m[2], 10, 64)
	if err1 != nil || err2 != nil || h > 1e6 || mins > 1e8 {
		im.note(at, "not translated: %q is out of range", v)
		return 0, false
	}
	d := config.Duration((h*60 + mins) * 60)
	if d == 0 {
		im.note(at, "not translated: a run limit of 0")
		return 0, false
	}
	if m[3] != "" {
		im.note(at, "translated without its normalization host %s: xce has no CPU factors; run limits are wall-clock", m[3])
	}
	return d, true
}

// runtime translates RUNTIME, a run time estimate in [hour:]minute[/host].
func (im *importer) runtime(t *table, p Param) {
	vals := strings.Fields(p.Value)
	if len(vals) != 1 {
		im.note(psrc(p), "not translated: expected one [hour:]minute value")
		return
	}
	if d, ok := im.runLimit(psrc(p), vals[0]); ok {
		t.set("runtime", config.TOMLString(d.String()), "RUNTIME "+vals[0], psrc(p))
	}
}

var sharesRE = regexp.MustCompile(`\[\s*([^,\[\]\s]+)\s*,\s*(\d+)\s*\]`)

func (im *importer) fairshare(t *table, p Param) {
	v := strings.TrimSpace(p.Value)
	inner, ok := strings.CutPrefix(v, "USER_SHARES")
	inner = strings.TrimSpace(inner)
	if !ok || !strings.HasPrefix(inner, "[") || !strings.HasSuffix(inner, "]") {
		im.note(psrc(p), "not translated: only FAIRSHARE = USER_SHARES[[name, shares] ...] translates")
		return
	}
	var keys, vals []string
	for _, m := range sharesRE.FindAllStringSubmatch(inner[1:len(inner)-1], -1) {
		who, n := m[1], m[2]
		if strings.HasSuffix(who, "@") {
			im.note(psrc(p), "not translated: [%s, %s]: xce has no per-member shares of a group", who, n)
			continue
		}
		if sh, _ := strconv.Atoi(n); sh <= 0 {
			im.note(psrc(p), "not translated: [%s, %s]: shares must be positive", who, n)
			continue
		}
		if slices.Contains(keys, who) {
			continue
		}
		keys, vals = append(keys, who), append(vals, n)
	}
	t.set("fairshare", tomlInline(keys, vals), "", psrc(p))
}

var preemptRE = regexp.MustCompile(`(?i)(PREEMPTIVE|PREEMPTABLE)\s*\[([^\]]*)\]`)

// preemption translates PREEMPTION once every queue's priority is known.
func (im *importer) preemption(q *queueInfo) {
	p := *q.preempt
	at := psrc(p)
	rest := strings.TrimSpace(preemptRE.ReplaceAllString(p.Value, ""))
	if rest != "" {
		im.note(at, "not translated: %q: only PREEMPTIVE[...] and PREEMPTABLE[...] translate", rest)
	}
	for _, m := range preemptRE.FindAllStringSubmatch(p.Value, -1) {
		kind := strings.ToUpper(m[1])
		key, all := "preemptive", "lower"
		if kind == "PREEMPTABLE" {
			key, all = "preemptable", "higher"
		}
		names := strings.Fields(m[2])
		if len(names) == 0 {
			q.t.set(key, tomlList([]string{all}), "", at)
			continue
		}
		var keep []string
		for _, n := range names {
			if pm := prefRE.FindStringSubmatch(n); pm != nil {
				im.note(at, "translated without the preference: %s: xce has no preemption preference levels", n)
				n = pm[1]
			}
			var o *queueInfo
			for _, x := range im.queues {
				if x.name == n {
					o = x
				}
			}
			switch {
			case o == nil:
				im.note(at, "not translated: %s: no such queue", n)
			case kind == "PREEMPTIVE" && o.prio >= q.prio:
				im.note(at, "not translated: %s: its priority %d is not lower than %s's %d", n, o.prio, q.name, q.prio)
			case kind == "PREEMPTABLE" && o.prio <= q.prio:
				im.note(at, "not translated: %s: its priority %d is not higher than %s's %d", n, o.prio, q.name, q.prio)
			default:
				keep = append(keep, n)
			}
		}
		q.t.set(key, tomlList(keep), "", at)
	}
}

// ---- lsb.applications

var appReasons = withJobLimits(map[string]string{
	"CONTAINER":      "xce.toml has no container settings yet; a job_starter can run the container",
	"EXEC_DRIVER":    "xce.toml has no container settings yet",
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

// ---- after every file

func (im *importer) finish() {
	for _, q := range im.queues {
		if q.preempt != nil {
			im.preemption(q)
		}
	}
	im.pickDefaultQueue()
	if p := im.defaultApp; p != nil {
		if im.apps[p.Value] {
			im.cluster.set("default_app", config.TOMLString(p.Value), "", psrc(*p))
		} else {
			im.note(psrc(*p), "not translated: no application profile %s was imported", p.Value)
		}
	}
	if len(im.cluster.entries) == 0 {
		im.d.removeTable(im.cluster)
	}
}

func (im *importer) pickDefaultQueue() {
	has := func(n string) bool {
		return slices.ContainsFunc(im.queues, func(q *queueInfo) bool { return q.name == n })
	}
	if p := im.defaultQueue; p != nil {
		cands := strings.Fields(p.Value)
		for i, c := range cands {
			if has(c) {
				if len(cands) > 1 {
					im.note(psrc(*p), "translated as %s: xce has one default queue", c)
				}
				if i > 0 {
					im.note(psrc(*p), "%s: not an imported queue", strings.Join(cands[:i], " "))
				}
				im.cluster.set("default_queue", config.TOMLString(c), "", psrc(*p))
				return
			}
		}
		im.note(psrc(*p), "not translated: no imported queue is named %s", p.Value)
	}
	switch {
	case len(im.queues) == 0:
		im.note(src{"lsb.queues", 0, ""}, "no queue was imported; xce uses its built-in queue normal")
	case has("default"):
		im.cluster.set("default_queue", config.TOMLString("default"), "LSF's default when DEFAULT_QUEUE is not set", src{"lsb.params", 0, "DEFAULT_QUEUE"})
	case len(im.queues) > 1:
		q := im.queues[0]
		im.note(src{"lsb.params", 0, "DEFAULT_QUEUE"}, "not set and no queue is named default; the first queue, %s, is made the default", q.name)
		im.cluster.set("default_queue", config.TOMLString(q.name), "chosen by the import", src{"lsb.params", 0, "DEFAULT_QUEUE"})
	}
}
