package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"xce/lib/cli"
	"xce/lib/config"
)

const root = "../.."

// The committed man pages and completions are what genman writes now: a
// command's option added, changed or removed, or a man/src file edited,
// without `make man` fails here.
func TestCommittedPagesAreCurrent(t *testing.T) {
	files, err := generate(root, pageDate)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range files {
		got, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Errorf("%s is missing: run `make man` and commit it", p)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is out of date with its command's definition or man/src: run `make man` and commit it\n%s", p, firstDiff(got, want))
		}
	}
	for _, d := range outDirs {
		ents, err := os.ReadDir(filepath.Join(root, d))
		if err != nil {
			t.Errorf("%s: %v (run `make man`)", d, err)
			continue
		}
		for _, e := range ents {
			if _, ok := files[d+"/"+e.Name()]; !ok {
				t.Errorf("%s/%s is not generated any more (its command is gone): run `make man`", d, e.Name())
			}
		}
	}
}

func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return "line " + itoa(i+1) + ":\n  committed: " + a + "\n  generated: " + b
		}
	}
	return ""
}

func itoa(i int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(i)) }

func fmtInt(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return fmtInt(i/10) + string(rune('0'+i%10))
}

// xce.toml(5) documents exactly the keys lib/config reads: every table of
// config.Config has a "## [name]" (or "## [name.NAME]") section whose
// "### key" headings are the toml tags of its type.
func TestTomlPageKeys(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(root, "man/src/xce.toml.5.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string][]string{}
	for _, s := range splitSections(string(src)) {
		if !strings.HasPrefix(s.name, "[") {
			continue
		}
		table := strings.TrimSuffix(strings.TrimSuffix(strings.Trim(s.name, "[]"), ".NAME"), "]")
		table = strings.TrimPrefix(table, "[") // [[limits]]
		var keys []string
		for _, line := range strings.Split(s.body, "\n") {
			if k, ok := strings.CutPrefix(line, "### "); ok {
				// "### a, b, c" documents keys that go together.
				for _, one := range strings.Split(k, ", ") {
					keys = append(keys, strings.Fields(one)[0])
				}
			}
		}
		documented[table] = keys
	}
	ct := reflect.TypeOf(config.Config{})
	for i := 0; i < ct.NumField(); i++ {
		f := ct.Field(i)
		table := tomlName(f)
		if table == "" {
			continue
		}
		typ := f.Type
		if typ.Kind() == reflect.Map || typ.Kind() == reflect.Slice { // [name.NAME] or [[name]]
			typ = typ.Elem()
		}
		if typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		want := tomlKeys(typ)
		got, ok := documented[table]
		if !ok {
			t.Errorf("xce.toml.5.md has no section for [%s]", table)
			continue
		}
		delete(documented, table)
		sort.Strings(want)
		sort.Strings(got)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("[%s]: the page documents %v, lib/config reads %v", table, got, want)
		}
	}
	for table := range documented {
		t.Errorf("xce.toml.5.md documents [%s], which lib/config does not read", table)
	}
}

func tomlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if name == "-" || name == "" {
		return ""
	}
	return name
}

// The roff renderer escapes what roff would read as requests or escapes.
func TestRoffEscapes(t *testing.T) {
	got := roffBlocks(".start with a dot, a \\ and -opt\n\n- item `-x`\n")
	for _, want := range []string{`\&.start`, `\e`, `\-opt`, `.IP \(bu 2`, `\fB\-x\fR`} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered text lacks %q:\n%s", want, got)
		}
	}
}

// badmin and lsadmin complete their subcommands, then each subcommand's
// operands, and never file names (bash's -o default would offer the
// current directory after "badmin "); bsub's -C is the core limit, not
// bkill's reason.
func TestSubcommandCompletion(t *testing.T) {
	byName := map[string]*cobra.Command{}
	for _, c := range cli.Commands() {
		byName[c.Name()] = c
	}
	bash := string(bashCompletion(byName["badmin"]))
	for _, want := range []string{`compgen -W "ckconfig hclose hdecommission hdrain hopen mbdrestart`, "qact|qclose|qinact|qopen) COMPREPLY=($(compgen -W \"$(bqueues", "\ncomplete -F _xce_badmin badmin\n"} {
		if !strings.Contains(bash, want) {
			t.Errorf("badmin's bash completion lacks %q:\n%s", want, bash)
		}
	}
	if strings.Contains(bash, "-o default") {
		t.Errorf("badmin's bash completion falls back to file names:\n%s", bash)
	}
	if zsh := string(zshCompletion(byName["lsadmin"])); !strings.Contains(zsh, "'1:subcommand:(ckconfig showconf)'") {
		t.Errorf("lsadmin's zsh completion:\n%s", zsh)
	}
	for _, f := range Flags(byName["bsub"]) {
		if f.Name == "C" && f.Arg != "core_limit" {
			t.Errorf("bsub -C takes %q, want core_limit", f.Arg)
		}
	}
}

// tomlKeys are the keys a table of type typ reads, those of embedded
// structs included (the TOML decoder reads them as the table's own).
func tomlKeys(typ reflect.Type) []string {
	var keys []string
	for j := 0; j < typ.NumField(); j++ {
		f := typ.Field(j)
		if f.Anonymous && f.Type.Kind() == reflect.Struct && f.Tag.Get("toml") == "" {
			keys = append(keys, tomlKeys(f.Type)...)
			continue
		}
		if k := tomlName(f); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}
