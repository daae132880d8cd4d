package lsfimport

// What the importer says of lsf.licensescheduler, LSF License
// Scheduler's configuration, and of the keys of xce.toml that lend a
// shared resource more units ([resources.NAME] provider, borrow_max,
// idle_time, sim_lend_delay): none has an LSF source. LSF's resource
// connector provisions hosts only (its provider interface asks for and
// returns machines), and License Scheduler hands a licence server's
// tokens out among projects and clusters by share instead of borrowing
// more of them from a provider. So a licence stays a shared resource with
// the total of its ResourceMap (N@[all]), and each License Scheduler
// feature is reported with what it means for the imported configuration.

import (
	"maps"
	"slices"
	"strings"
)

// licenseScheduler reports lsf.licensescheduler: a feature whose name
// is an imported shared resource keeps that resource's total (a note);
// one that is not leaves jobs asking rusage[] of it refused (a loss:
// License Scheduler defines the resource itself in LSF); the other
// sections are not translated.
func (im *importer) licenseScheduler(f *File) {
	if f == nil {
		return
	}
	for _, p := range f.Params {
		im.notTranslated(p, nil)
	}
	for _, s := range f.Sections {
		if !strings.EqualFold(s.Name, "Feature") {
			im.sectionNote(s, "LSF License Scheduler's "+s.Name+" section; xce has no License Scheduler (a licence is a shared resource with a total)")
			continue
		}
		name := ""
		for _, k := range []string{"NAME", "LM_LICENSE_NAME", "FLEX_NAME"} {
			if p, ok := s.Param(k); ok && name == "" {
				name = Unquote(strings.TrimSpace(p.Value))
			}
		}
		at := src{s.File, s.Line, "Feature " + name}
		res := im.res[name]
		switch {
		case name == "":
			im.note(src{s.File, s.Line, "Begin Feature"}, "section not translated: the feature has no NAME")
		case res != nil && res.t.get("total") != nil:
			im.note(at, "not translated: License Scheduler's distribution of the feature's tokens; the shared resource %s keeps its ResourceMap total, and borrows no units (provider, borrow_max and idle_time of [resources.%s] have no LSF source)", name, name)
		default:
			im.loss(at, "not translated: License Scheduler defines the resource %s for LSF; xce.toml does not, so jobs asking rusage[%s] are refused: define [resources.%s] with the licences' total (and a provider to borrow more, which has no LSF source)", name, name, name)
		}
	}
}

// borrowNote says, when the resource connector's providers were
// imported and the configuration has shared resources, that none of them
// borrows: the resource connector lends hosts only.
func (im *importer) borrowNote(rcRel string) {
	if rcRel == "" {
		return
	}
	var shared []string
	for _, name := range slices.Sorted(maps.Keys(im.res)) {
		if im.res[name].t.get("total") != nil {
			shared = append(shared, name)
		}
	}
	if len(shared) == 0 {
		return
	}
	im.note(src{rcRel, 0, "providers"}, "the shared resources (%s) borrow from no provider: LSF's resource connector provisions hosts only, so provider, borrow_max and idle_time of [resources.NAME] have no LSF source",
		strings.Join(shared, ", "))
}
