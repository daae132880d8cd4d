package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"xce/lib/cli"
)

// compatRow is one option row of docs/lsf-compatibility.md.
type compatRow struct {
	option, status string
	line           int
}

// readCompat parses the page: "## name" sections, each with a table whose
// rows start with the option in backquotes (`-app`) and give its status.
func readCompat(t *testing.T) (map[string][]compatRow, map[string]string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs/lsf-compatibility.md"))
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string][]compatRow{}
	missing := map[string]string{} // commands XCE does not provide
	var cur string
	for i, line := range strings.Split(string(b), "\n") {
		if name, ok := strings.CutPrefix(line, "## "); ok {
			cur = strings.TrimSpace(name)
			if !strings.HasPrefix(cur, "Commands ") {
				if _, dup := sections[cur]; dup {
					t.Errorf("line %d: ## %s twice", i+1, cur)
				}
				sections[cur] = nil
			}
			continue
		}
		if cur == "" || !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 3 {
			t.Errorf("line %d: a row needs option, status and notes", i+1)
			continue
		}
		first, status := strings.TrimSpace(cells[0]), strings.TrimSpace(cells[1])
		if first == "Option" || first == "Command" || strings.HasPrefix(first, "Option ") {
			continue // the header
		}
		switch status {
		case "supported", "difference", "not supported":
		default:
			t.Errorf("line %d: status %q is not supported, difference or not supported", i+1, status)
		}
		if (status == "difference" || status == "not supported") && strings.TrimSpace(cells[2]) == "" {
			t.Errorf("line %d: %s %s needs a note saying what differs or why", i+1, first, status)
		}
		if strings.HasPrefix(cur, "Commands ") {
			for _, c := range strings.Split(first, ",") {
				missing[strings.TrimSpace(c)] = status
			}
			continue
		}
		if !strings.HasPrefix(first, "`-") {
			continue // a subcommand (badmin)
		}
		opt, _, _ := strings.Cut(strings.TrimPrefix(first, "`"), "`")
		sections[cur] = append(sections[cur], compatRow{option: strings.Fields(opt)[0][1:], status: status, line: i + 1})
	}
	return sections, missing
}

// docs/lsf-compatibility.md agrees with the options the commands define.
func TestCompatibilityTable(t *testing.T) {
	sections, missing := readCompat(t)
	for _, c := range cli.Commands() {
		rows, ok := sections[c.Name()]
		if !ok {
			t.Errorf("docs/lsf-compatibility.md has no ## %s section", c.Name())
			continue
		}
		delete(sections, c.Name())
		if _, ok := missing[c.Name()]; ok {
			t.Errorf("docs/lsf-compatibility.md lists %s among the commands XCE does not provide", c.Name())
		}
		listed := map[string]compatRow{}
		for _, r := range rows {
			if _, dup := listed[r.option]; dup {
				t.Errorf("line %d: %s -%s listed twice", r.line, c.Name(), r.option)
			}
			listed[r.option] = r
		}
		defined := map[string]bool{}
		for _, f := range Flags(c) {
			defined[f.Name] = true
			r, ok := listed[f.Name]
			switch {
			case !ok:
				t.Errorf("%s defines -%s, which docs/lsf-compatibility.md does not list", c.Name(), f.Name)
			case r.status == "not supported":
				t.Errorf("line %d: %s -%s is listed as not supported, but %s defines it", r.line, c.Name(), f.Name, c.Name())
			}
		}
		for _, r := range rows {
			if r.status != "not supported" && !defined[r.option] {
				t.Errorf("line %d: %s -%s is listed as %s, but %s does not define it", r.line, c.Name(), r.option, r.status, c.Name())
			}
		}
	}
	for name := range sections {
		t.Errorf("docs/lsf-compatibility.md has a ## %s section, but XCE has no such command (list it under the commands XCE does not provide)", name)
	}
}
