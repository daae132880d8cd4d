// Command genman writes XCE's man pages and shell completions from the
// commands' definitions (lib/cli.Commands) and the hand-written parts in
// man/src. `make man` runs it from the repository root; the output is
// committed, and genman_test.go fails when a committed file differs from
// what genman writes now (an option added, changed or removed without
// `make man`).
//
// Written, under the root given by -root (default "."):
//
//	man/man1/CMD.1               one page per command: NAME and SYNOPSIS
//	                             from the command, OPTIONS from its flags in
//	                             LSF's single-dash form, DESCRIPTION,
//	                             EXAMPLES, LSF DIFFERENCES (and any other
//	                             section) from man/src/CMD.md
//	man/man5/xce.toml.5          from man/src/xce.toml.5.md
//	man/man8/xced.8, man1/xcetop.1  from man/src/xced.8.md, xcetop.1.md
//	completions/bash/CMD         bash completion, one file per command (the
//	                             layout of bash-completion's completions/)
//	completions/zsh/_CMD         zsh completion functions
//
// The date on the pages is a constant (pageDate), not the day of the run
// (nor SOURCE_DATE_EPOCH, which would make `make man` disagree with the
// test), so that regenerating changes nothing unless a definition changed.
//
// cobra's own generators are not used as they are: its man pages and
// completion scripts name flags --app (pflag's long form), and its bash v2
// and zsh scripts call the program back with a hidden __complete command
// that XCE's LSF argv handling does not route. The scripts written here
// are static, offer the single-dash options, and complete queue, host,
// profile and user names by asking bqueues, bhosts, bapp at that moment.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"xce/lib/cli"
	"xce/lib/version"
)

// pageDate is the date on the pages; change it when the pages change much.
const pageDate = "November 2026"

func main() {
	root := flag.String("root", ".", "the repository root: man/src is read there")
	out := flag.String("out", "", "where man/ and completions/ are written (default: -root)")
	flag.Parse()
	if *out == "" {
		*out = *root
	}
	files, err := generate(*root, pageDate)
	if err == nil {
		err = write(*out, files)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genman:", err)
		os.Exit(1)
	}
}

// outDirs are the directories genman owns: a file there that generate
// does not produce is removed by write (a command that went away).
var outDirs = []string{"man/man1", "man/man5", "man/man8", "completions/bash", "completions/zsh"}

// handPages are written by hand whole, in man/src.
var handPages = []struct {
	src, name, manual string
	section           int
}{
	{"xce.toml.5.md", "xce.toml", "XCE File Formats", 5},
	{"xced.8.md", "xced", "XCE Administration", 8},
	{"xced-simulate.8.md", "xced-simulate", "XCE Administration", 8},
	{"xced-provisioner.8.md", "xced-provisioner", "XCE Administration", 8},
	{"xcetop.1.md", "xcetop", "XCE User Commands", 1},
}

// generate returns every output file, by path relative to root.
func generate(root, date string) (map[string][]byte, error) {
	files := map[string][]byte{}
	cmds := cli.Commands()
	var names []string
	for _, c := range cmds {
		names = append(names, c.Name())
	}
	source := version.Short()
	srcDir := filepath.Join(root, "man", "src")
	used := map[string]bool{}
	for _, c := range cmds {
		src, err := os.ReadFile(filepath.Join(srcDir, c.Name()+".md"))
		if err != nil {
			return nil, fmt.Errorf("%s has no hand-written part: write man/src/%s.md (DESCRIPTION, EXAMPLES, LSF DIFFERENCES): %w", c.Name(), c.Name(), err)
		}
		used[c.Name()+".md"] = true
		page, err := manPage(c, string(src), names, date, source)
		if err != nil {
			return nil, fmt.Errorf("man/src/%s.md: %w", c.Name(), err)
		}
		files["man/man1/"+c.Name()+".1"] = page
		files["completions/bash/"+c.Name()] = bashCompletion(c)
		files["completions/zsh/_"+c.Name()] = zshCompletion(c)
	}
	// The pages written by hand whole: the configuration file, the
	// controller and the dashboard (not lib/cli commands).
	for _, hp := range handPages {
		src, err := os.ReadFile(filepath.Join(srcDir, hp.src))
		if err != nil {
			return nil, err
		}
		used[hp.src] = true
		var b bytes.Buffer
		b.WriteString(th(hp.name, hp.section, date, source, hp.manual))
		for _, s := range splitSections(string(src)) {
			if s.name == "NAME" { // one plain line, for whatis and apropos
				b.WriteString(".SH NAME\n" + inline(strings.Join(strings.Fields(s.body), " ")) + "\n")
				continue
			}
			b.WriteString(".SH " + quoteSH(s.name) + "\n" + roffBlocks(s.body))
		}
		files[fmt.Sprintf("man/man%d/%s.%d", hp.section, hp.name, hp.section)] = b.Bytes()
	}
	// A source file for a command that does not exist is a stale page.
	ents, err := os.ReadDir(srcDir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".md") && !used[e.Name()] {
			return nil, fmt.Errorf("man/src/%s: no such command", e.Name())
		}
	}
	return files, nil
}

// write replaces the generated files under root and removes those of
// commands that no longer exist.
func write(root string, files map[string][]byte) error {
	for _, d := range outDirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
		ents, err := os.ReadDir(filepath.Join(root, d))
		if err != nil {
			return err
		}
		for _, e := range ents {
			if _, ok := files[d+"/"+e.Name()]; !ok && !e.IsDir() {
				if err := os.Remove(filepath.Join(root, d, e.Name())); err != nil {
					return err
				}
			}
		}
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := os.WriteFile(filepath.Join(root, p), files[p], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Flag is one option as LSF writes it.
type Flag struct {
	Name  string // without the dash: "app", "h"
	Arg   string // the value's name; "" for a switch
	Usage string
	Flag  *pflag.Flag
}

// Flags returns a command's options in definition order, its own first,
// then -h and -V.
func Flags(c *cobra.Command) []Flag {
	fs := c.Flags()
	fs.SortFlags = false
	var own, common []Flag
	fs.VisitAll(func(f *pflag.Flag) {
		name := cli.OptionName(f)
		fl := Flag{Name: name, Usage: f.Usage, Flag: f}
		if f.Value.Type() != "bool" {
			fl.Arg = cli.ArgName(f) // as the commands' -h names it
		}
		if name == "h" || name == "V" {
			common = append(common, fl)
		} else {
			own = append(own, fl)
		}
	})
	return append(own, common...)
}

// manPage writes one command's page.
func manPage(c *cobra.Command, src string, all []string, date, source string) ([]byte, error) {
	secs := splitSections(src)
	bySec := map[string]string{}
	for _, s := range secs {
		bySec[s.name] = s.body
	}
	for _, need := range []string{"DESCRIPTION", "EXAMPLES", "LSF DIFFERENCES"} {
		if strings.TrimSpace(bySec[need]) == "" {
			return nil, fmt.Errorf("no %q section", need)
		}
	}
	// OPTIONS in the source adds text to options: "### -M mem_limit[!]"
	// (the option, then its value's name) replaces the generated tag, and its paragraphs follow the flag's
	// usage. Naming an option the command lacks is an error.
	extra, err := optionNotes(bySec["OPTIONS"])
	if err != nil {
		return nil, err
	}
	flags := Flags(c)
	defined := map[string]bool{}
	for _, f := range flags {
		defined[f.Name] = true
	}
	for name := range extra {
		if !defined[name] {
			return nil, fmt.Errorf("OPTIONS describes -%s, which %s does not define", name, c.Name())
		}
	}
	var b bytes.Buffer
	b.WriteString(th(c.Name(), 1, date, source, "XCE User Commands"))
	b.WriteString(".SH NAME\n" + escape(c.Name()) + ` \- ` + escape(c.Short) + "\n")
	b.WriteString(".SH SYNOPSIS\n")
	name, rest, _ := strings.Cut(c.Use, " ")
	b.WriteString(`\fB` + escape(name) + `\fR ` + escape(rest) + "\n")
	b.WriteString(".SH DESCRIPTION\n" + roffBlocks(bySec["DESCRIPTION"]))
	b.WriteString(".SH OPTIONS\n")
	for _, f := range flags {
		tag := `\fB\-` + escape(f.Name) + `\fR`
		if f.Arg != "" {
			tag += ` \fI` + escape(f.Arg) + `\fR`
		}
		var notes string
		if n, ok := extra[f.Name]; ok {
			if n.tag != "" {
				word, rest, _ := strings.Cut(n.tag, " ")
				tag = `\fB` + escape(word) + `\fR`
				if rest = strings.TrimSpace(rest); rest != "" {
					tag += ` \fI` + escape(rest) + `\fR`
				}
			}
			notes = n.body
		}
		b.WriteString(".TP\n" + tag + "\n" + inline(sentence(f.Usage)) + "\n")
		if strings.TrimSpace(notes) != "" {
			b.WriteString(strings.ReplaceAll(roffBlocks(notes), ".PP\n", ".IP\n"))
		}
	}
	order := []string{"EXAMPLES", "LSF DIFFERENCES"}
	for _, s := range secs {
		switch s.name {
		case "DESCRIPTION", "OPTIONS", "EXAMPLES", "LSF DIFFERENCES", "SEE ALSO":
			continue
		}
		order = append(order, s.name) // ENVIRONMENT, EXIT STATUS, ...
	}
	for _, name := range order {
		b.WriteString(".SH " + quoteSH(name) + "\n" + roffBlocks(bySec[name]))
	}
	b.WriteString(".SH \"SEE ALSO\"\n")
	var see []string
	if s := strings.TrimSpace(bySec["SEE ALSO"]); s != "" {
		see = append(see, strings.Fields(strings.ReplaceAll(s, ",", " "))...)
	} else {
		for _, n := range all {
			if n != c.Name() {
				see = append(see, n+"(1)")
			}
		}
	}
	see = append(see, "xce.toml(5)")
	var refs []string
	for _, s := range see {
		name, sect, _ := strings.Cut(s, "(")
		refs = append(refs, `\fB`+escape(name)+`\fR(`+sect)
	}
	b.WriteString(strings.Join(refs, ", ") + "\n")
	return b.Bytes(), nil
}

type note struct{ tag, body string }

// optionNotes reads the OPTIONS section of a source: "### -name ..."
// headings, each with its text.
func optionNotes(body string) (map[string]note, error) {
	out := map[string]note{}
	var cur string
	for _, line := range strings.SplitAfter(body, "\n") {
		if strings.HasPrefix(line, "### ") {
			tag := strings.TrimSpace(line[4:])
			word, _, _ := strings.Cut(tag, " ")
			if len(word) < 2 || word[0] != '-' {
				return nil, fmt.Errorf("OPTIONS: %q does not start with an option", tag)
			}
			cur = word[1:]
			if _, dup := out[cur]; dup {
				return nil, fmt.Errorf("OPTIONS: -%s twice", cur)
			}
			out[cur] = note{tag: tag}
			continue
		}
		if cur != "" {
			n := out[cur]
			n.body += line
			out[cur] = n
		} else if strings.TrimSpace(line) != "" {
			return nil, fmt.Errorf("OPTIONS: text before the first ### -option")
		}
	}
	return out, nil
}

// sentence capitalises a usage string and ends it with a full stop.
func sentence(s string) string {
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

func quoteSH(name string) string {
	if strings.ContainsAny(name, " \t") {
		return `"` + name + `"`
	}
	return name
}
