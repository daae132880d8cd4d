package lsfimport

// What the importer takes from LSF resource connector's
// resource_connector/hostProviders.json and each provider's templates
// file (<confPath>/conf/<type>_templates.json).

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"xce/lib/config"
)

// hostProvidersFiles are where hostProviders.json may be, relative to
// the configuration directory: LSF's place, and a flat copy beside
// lsf.conf.
var hostProvidersFiles = []string{"resource_connector/hostProviders.json", "hostProviders.json"}

// rcMaxFile bounds the JSON files read (a templates file of thousands of
// templates is a few MB).
const rcMaxFile = 64 << 20

// providerReasons are why a hostProviders.json key is not translated.
var providerReasons = map[string]string{
	"preProvPath":  "xce runs no pre-provisioning script; a provider script may do the work",
	"postProvPath": "xce runs no post-provisioning script; a provider script may do the work",
	"provTimeOut":  "xce runs no pre- or post-provisioning script",
}

// resourceConnector translates hostProviders.json: each provider becomes
// [providers.NAME] of kind "script", each template of its templates file
// [templates.ID] with the LSB_RC_* parameters applied.
func (im *importer) resourceConnector() {
	rel, data, err := im.readRC()
	if err != nil {
		im.loss(src{rel, 0, ""}, "cannot be read: %v; no provider or template is imported", err)
	}
	st := im.rcSettings(data != nil)
	if data == nil {
		return
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		im.loss(src{rel, 0, ""}, "cannot be read: %v; no provider or template is imported", err)
		return
	}
	for _, k := range slices.Sorted(maps.Keys(top)) {
		if k != "providers" {
			im.note(src{rel, 0, k}, "not translated: xce.toml has no equivalent")
		}
	}
	var provs []map[string]json.RawMessage
	if err := json.Unmarshal(top["providers"], &provs); err != nil || len(provs) == 0 {
		im.note(src{rel, 0, "providers"}, "no provider is listed; nothing to import")
		return
	}
	if _, err := os.Stat(filepath.Join(im.dir, filepath.Dir(rel), "policy_config.json")); err == nil {
		im.note(src{filepath.Join(filepath.Dir(rel), "policy_config.json"), 0, ""},
			"not read: xce.toml has no provisioning policy (StepValue, MaxNumber per account); each template's max bounds its instances")
	}
	seen := map[string]string{} // template -> its provider
	for i, p := range provs {
		im.rcProvider(rel, i, p, st, seen)
	}
	im.borrowNote(rel)
}

// readRC reads the first hostProviders.json there is; data is nil when
// there is none (or it cannot be read: err).
func (im *importer) readRC() (rel string, data []byte, err error) {
	for _, rel := range hostProvidersFiles {
		data, err := readCapped(filepath.Join(im.dir, rel))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		return rel, data, err
	}
	return hostProvidersFiles[0], nil, nil
}

func readCapped(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, rcMaxFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > rcMaxFile {
		return nil, fmt.Errorf("larger than %d MB", rcMaxFile>>20)
	}
	return data, nil
}

// has reports whether the document has the table path.
func (d *doc) has(path ...string) bool {
	return slices.ContainsFunc(d.tables, func(t *table) bool { return slices.Equal(t.path, path) })
}

func jsonString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// jsonNumber reads a number written as a JSON number or a string of one.
func jsonNumber(raw json.RawMessage) (float64, bool) {
	var f float64
	if json.Unmarshal(raw, &f) == nil {
		return f, true
	}
	f, err := strconv.ParseFloat(jsonString(raw), 64)
	return f, err == nil
}

func (im *importer) rcProvider(rel string, i int, p map[string]json.RawMessage, st rcSettings, seen map[string]string) {
	name := jsonString(p["name"])
	at := src{rel, 0, fmt.Sprintf("providers[%d]", i)}
	if name == "" {
		im.note(at, "not translated: the provider has no name")
		return
	}
	at.key = "provider " + name
	if im.badName(at, name, false) {
		return
	}
	if im.d.has("providers", name) {
		im.note(at, "not translated: provider %s is listed twice; the first is kept", name)
		return
	}
	typ := jsonString(p["type"])
	for _, k := range slices.Sorted(maps.Keys(p)) {
		switch k {
		case "name", "type", "confPath", "scriptPath":
		default:
			why := providerReasons[k]
			if why == "" {
				why = "xce.toml has no equivalent"
			}
			im.note(src{rel, 0, at.key + ": " + k}, "not translated: %s", why)
		}
	}
	dir, comment := im.rcScriptDir(at, jsonString(p["scriptPath"]))
	if dir == "" {
		return
	}
	t := im.d.table(rel+": provider "+name, at, "providers", name)
	kindComment := "LSF resource connector's provider scripts"
	if typ != "" {
		kindComment += " (type " + typ + ")"
	}
	t.set("kind", config.TOMLString("script"), kindComment, at)
	t.set("script_dir", config.TOMLString(dir), comment, at)
	im.rcTemplates(at, name, typ, jsonString(p["confPath"]), st, seen)
}

// rcScriptDir finds the provider's scripts: scriptPath (relative ones
// from LSF_TOP/VERSION, the grandparent of LSF_SERVERDIR), in its
// "scripts" directory as LSF installs them, or scriptPath itself where it
// holds requestMachines.sh.
func (im *importer) rcScriptDir(at src, scriptPath string) (dir, comment string) {
	if scriptPath == "" {
		im.note(at, "not translated: the provider has no scriptPath, so its scripts cannot be found")
		return "", ""
	}
	base, comment := scriptPath, "scriptPath "+scriptPath
	if !filepath.IsAbs(scriptPath) {
		if sd := im.rc.serverDir; filepath.IsAbs(sd) {
			base = filepath.Join(filepath.Dir(filepath.Dir(filepath.Clean(sd))), scriptPath)
			comment += ", from LSF_SERVERDIR/../.."
		} else {
			abs, err := filepath.Abs(im.dir)
			if err != nil {
				im.note(at, "not translated: scriptPath %s is relative and lsf.conf has no LSF_SERVERDIR", scriptPath)
				return "", ""
			}
			base = filepath.Join(filepath.Dir(abs), scriptPath)
			im.note(at, "scriptPath %s is relative and lsf.conf has no LSF_SERVERDIR; it is taken from %s: review script_dir", scriptPath, filepath.Dir(abs))
		}
	}
	dir = filepath.Join(base, "scripts")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if _, err := os.Stat(filepath.Join(base, "requestMachines.sh")); err == nil {
			dir = base
		}
	}
	return dir, comment
}

// rcTemplates finds the provider's templates file under confPath
// (relative to the configuration directory): conf/*_templates.json as
// LSF installs it, else *_templates.json in confPath itself. Where there
// are several, the one named after the provider's type is read.
func (im *importer) rcTemplates(at src, prov, typ, confPath string, st rcSettings, seen map[string]string) {
	if confPath == "" {
		im.note(at, "no confPath: the provider's templates cannot be found; none is imported")
		return
	}
	root := confPath
	if !filepath.IsAbs(root) {
		root = filepath.Join(im.dir, confPath)
	}
	var files []string
	for _, d := range []string{filepath.Join(root, "conf"), root} {
		if files, _ = filepath.Glob(filepath.Join(d, "*_templates.json")); len(files) > 0 {
			break
		}
	}
	if len(files) == 0 {
		im.note(at, "no *_templates.json under confPath %s; no template is imported", confPath)
		return
	}
	lt := strings.ToLower(typ)
	pick := files[0]
	for _, f := range files {
		b := filepath.Base(f)
		if b == lt+"_templates.json" || b == strings.TrimSuffix(lt, "prov")+"_templates.json" {
			pick = f
			break
		}
	}
	relName := func(f string) string {
		if r, err := filepath.Rel(im.dir, f); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
		return f
	}
	for _, f := range files {
		if f != pick {
			im.note(src{relName(f), 0, ""}, "not read: the templates of provider %s are read from %s", prov, relName(pick))
		}
	}
	file := relName(pick)
	data, err := readCapped(pick)
	var top map[string]json.RawMessage
	if err == nil {
		err = json.Unmarshal(data, &top)
	}
	if err != nil {
		im.loss(src{file, 0, ""}, "cannot be read: %v; the templates of provider %s are not imported", err, prov)
		return
	}
	for _, k := range slices.Sorted(maps.Keys(top)) {
		if k != "templates" {
			im.note(src{file, 0, k}, "not translated: xce.toml has no equivalent")
		}
	}
	var ts []map[string]json.RawMessage
	if err := json.Unmarshal(top["templates"], &ts); err != nil || len(ts) == 0 {
		im.note(src{file, 0, "templates"}, "no template is listed")
		return
	}
	for i, t := range ts {
		im.rcTemplate(file, i, prov, t, st, seen)
	}
}

// rcTemplate translates one template into [templates.ID].
func (im *importer) rcTemplate(file string, i int, prov string, raw map[string]json.RawMessage, st rcSettings, seen map[string]string) {
	id := jsonString(raw["templateId"])
	at := src{file, 0, fmt.Sprintf("templates[%d]", i)}
	if id == "" {
		im.note(at, "not translated: the template has no templateId")
		return
	}
	at.key = id
	sub := func(k string) src { return src{file, 0, id + ": " + k} }
	if im.badName(at, id, true) {
		return
	}
	if other, dup := seen[id]; dup {
		im.note(at, "not translated: provider %s has a template %s too; xce.toml names a template once", other, id)
		return
	}
	if im.hosts[id] != nil || im.hgroups[id] {
		im.note(at, "not translated: %s is also a host or host group; a template needs a name of its own", id)
		return
	}
	n, ok := jsonNumber(raw["maxNumber"])
	maxComment := ""
	switch {
	case raw["maxNumber"] == nil:
		n, maxComment = float64(st.maxPer), "no maxNumber: "+st.maxPerComment
	case !ok || n != float64(int64(n)) || n < 0:
		im.note(sub("maxNumber"), "not translated: %s is not a number of instances; the template is left out", raw["maxNumber"])
		return
	case n == 0:
		im.note(sub("maxNumber"), "0: the template is disabled; left out")
		return
	case int64(n) > st.maxPer:
		maxComment = fmt.Sprintf("maxNumber %d capped by %s", int64(n), st.maxPerComment)
		n = float64(st.maxPer)
	}
	seen[id] = prov
	t := im.d.table(file+": template "+id, at, "templates", id)
	t.set("provider", config.TOMLString(prov), "", at)
	t.set("max", tomlInt(int64(n)), maxComment, at)
	im.rcAttributes(t, id, file, raw["attributes"], st)
	t.set("idle_time", st.idle, st.idleComment, at)
	t.set("max_ttl", st.ttl, st.ttlComment, at)
	var provOwn []string
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		switch k {
		case "templateId", "maxNumber", "attributes":
		case "priority":
			im.note(sub(k), "not translated: xce has no template priority; the scheduler tries the templates a job may use in name order")
		default:
			provOwn = append(provOwn, k)
		}
	}
	if len(provOwn) > 0 {
		im.note(at, "left to the provider's scripts, which read them from this file: %s", strings.Join(provOwn, ", "))
	}
}

// rcAttributes translates a template's attributes: type, ncpus (slots;
// ncores where there is no ncpus), mem (MB), ngpus, pricing (price) and
// the resources of lsf.shared its hosts carry; LSB_RC_EXTERNAL_HOST_FLAG
// and LSB_RC_DEFAULT_HOST_TYPE apply here.
func (im *importer) rcAttributes(t *table, id, file string, raw json.RawMessage, st rcSettings) {
	sub := func(k string) src { return src{file, 0, id + ": attributes." + k} }
	var attrs map[string]json.RawMessage
	if raw != nil {
		if err := json.Unmarshal(raw, &attrs); err != nil {
			im.note(src{file, 0, id + ": attributes"}, "not translated: not an object of attributes")
		}
	}
	type attr struct{ kind, val string }
	get := map[string]attr{}
	for _, name := range slices.Sorted(maps.Keys(attrs)) {
		var pair []json.RawMessage
		if json.Unmarshal(attrs[name], &pair) != nil || len(pair) != 2 {
			im.note(sub(name), "not translated: expected [\"Type\", \"value\"]")
			continue
		}
		kind := strings.ToLower(jsonString(pair[0]))
		val := jsonString(pair[1])
		if f, ok := jsonNumber(pair[1]); ok && val == "" {
			val = strconv.FormatFloat(f, 'f', -1, 64)
		}
		if kind != "string" && kind != "numeric" && kind != "boolean" {
			im.note(sub(name), "not translated: %q is not String, Numeric or Boolean", jsonString(pair[0]))
			continue
		}
		get[name] = attr{kind, val}
	}
	count := func(name string, least int64) (int64, bool) {
		a := get[name]
		n, err := strconv.ParseInt(a.val, 10, 64)
		if a.kind != "numeric" || err != nil || n < least || n > maxInt32 {
			im.note(sub(name), "not translated: %q is not a whole number from %d", a.val, least)
			return 0, false
		}
		return n, true
	}
	var slots, gpus int64
	var mem, typ, model, price string
	var memComment, typComment string
	var resKeys, resVals []string
	for _, name := range slices.Sorted(maps.Keys(get)) {
		a := get[name]
		switch name {
		case "type", "model":
			if a.kind != "string" || !config.ValidName(a.val) {
				im.note(sub(name), "not translated: %q is not a host %s", a.val, name)
				continue
			}
			if name == "type" {
				typ = a.val
			} else {
				model = a.val
			}
		case "ncpus":
			if n, ok := count(name, 1); ok {
				slots = n
			}
		case "ncores":
			if _, has := get["ncpus"]; has {
				im.note(sub(name), "not translated: a template's hosts get ncpus slots")
			} else if n, ok := count(name, 1); ok {
				slots = n
			}
		case "ngpus":
			if n, ok := count(name, 0); ok {
				gpus = n
			}
		case "mem":
			f, err := strconv.ParseFloat(a.val, 64)
			if a.kind != "numeric" || err != nil || f < 0 || f > 1<<40 {
				im.note(sub(name), "not translated: %q is not an amount of memory in MB", a.val)
				continue
			}
			mem, memComment = config.TOMLString(config.Memory(f*1024+0.5).String()), "mem "+a.val+" MB"
		case "pricing":
			f, err := strconv.ParseFloat(a.val, 64)
			if a.kind != "numeric" || err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
				im.note(sub(name), "not translated: %q is not a price", a.val)
				continue
			}
			price = strconv.FormatFloat(f, 'f', -1, 64)
		default:
			k, v, ok := im.rcResource(sub(name), name, a.kind, a.val)
			if ok {
				resKeys, resVals = append(resKeys, k), append(resVals, v)
			}
		}
	}
	resComment := ""
	for _, f := range st.flags {
		if !slices.Contains(resKeys, f) {
			resKeys, resVals = append(resKeys, f), append(resVals, "true")
			resComment = "LSB_RC_EXTERNAL_HOST_FLAG " + strings.Join(st.flags, " ")
		}
	}
	if typ == "" && st.defaultType != "" && config.ValidName(st.defaultType) {
		typ, typComment = st.defaultType, "LSB_RC_DEFAULT_HOST_TYPE"
	}
	at := src{file, 0, id}
	if slots > 0 {
		t.set("slots", tomlInt(slots), "", at)
	}
	t.set("mem", mem, memComment, at)
	if typ != "" {
		t.set("type", config.TOMLString(typ), typComment, at)
	}
	if model != "" {
		t.set("model", config.TOMLString(model), "", at)
	}
	if gpus > 0 {
		t.set("gpus", tomlInt(gpus), "", at)
	}
	t.set("resources", tomlInline(resKeys, resVals), resComment, at)
	t.set("price", price, "pricing", at)
}

// rcResource translates a custom attribute: a resource lsf.shared
// defines, of the same type. A Boolean one that is 0 is left out.
func (im *importer) rcResource(at src, name, kind, val string) (key, tomlVal string, ok bool) {
	r := im.res[name]
	switch {
	case r == nil:
		im.note(at, "not translated: %s is not a resource of lsf.shared", name)
		return "", "", false
	case r.kind != kind:
		im.note(at, "not translated: %s is a %s resource in lsf.shared", name, r.kind)
		return "", "", false
	}
	switch kind {
	case "boolean":
		switch strings.ToLower(val) {
		case "1", "true", "y", "yes":
			return name, "true", true
		case "0", "false", "n", "no":
			return "", "", false // the hosts lack it: nothing to write
		}
		im.note(at, "not translated: %q is not 1 or 0", val)
	case "numeric":
		f, err := strconv.ParseFloat(val, 64)
		if err == nil && f >= 0 && f < 1<<53 {
			return name, strconv.FormatFloat(f, 'f', -1, 64), true
		}
		im.note(at, "not translated: %q is not a number, not negative", val)
	default:
		return name, config.TOMLString(val), true
	}
	return "", "", false
}
