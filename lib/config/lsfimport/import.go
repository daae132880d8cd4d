package lsfimport

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"xce/lib/config"
)

// The files Import reads, in the order it reads them.
var knownFiles = []string{"lsf.conf", "lsf.shared", "lsf.cluster.*", "lsb.params", "lsb.hosts", "lsb.users", "lsb.queues", "lsb.applications", "lsb.resources", "lsf.licensescheduler"}

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

	cuTypes []string // COMPUTE_UNIT_TYPES as written, finest first (lsbparams.go)
	// preemptDelay is lsb.params PREEMPT_DELAY, given to every queue
	// without its own (xce has it per queue only).
	preemptDelay *Param

	rc rcState // the resource connector's parameters (rc.go)
}

type resInfo struct {
	t    *table
	kind string // "boolean", "numeric", "string"
	// reported: an ELIM reports it (INTERVAL); at is its row, hosts
	// the hosts ResourceMap gives it (reportedNote).
	reported bool
	at       src
	hosts    []string
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
	im.resourceConnector()
	im.licenseScheduler(read("lsf.licensescheduler"))
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

// ---- after every file

func (im *importer) finish() {
	for _, q := range im.queues {
		if q.preempt != nil {
			im.preemption(q)
		}
	}
	im.reportedNote()
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
