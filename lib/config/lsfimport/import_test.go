package lsfimport

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toml "github.com/pelletier/go-toml/v2"

	"xce/lib/config"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func reportText(notes []Note) string {
	var b strings.Builder
	for _, n := range notes {
		b.WriteString(n.String() + "\n")
	}
	return b.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run go test -update and review the diff):\n%s", name, got)
	}
}

// withoutLimits cuts the [[limits]] entries (written last) from an
// imported text, when lib/config does not know [[limits]] yet.
func withoutLimits(t *testing.T, text string) string {
	t.Helper()
	var any map[string]any
	if err := toml.Unmarshal([]byte(text), &any); err != nil {
		t.Fatalf("the imported text is not TOML: %v\n%s", err, text)
	}
	if _, err := config.Parse("xce.toml", []byte("[[limits]]\n")); err == nil || !strings.Contains(err.Error(), "limits: unknown table") {
		return text
	}
	i := strings.Index(text, "\n[[limits]]\n")
	if i < 0 {
		return text
	}
	// Back to the comment that heads the first entry.
	j := strings.LastIndex(text[:i], "\n\n")
	return text[:j+1]
}

// TestImportGolden imports a realistic LSF configuration directory: the
// xce.toml and the report are golden files, the xce.toml loads without
// error, and a second import gives the same text.
func TestImportGolden(t *testing.T) {
	text, report, err := Import("testdata/lsf")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "xce.toml.golden", text)
	golden(t, "report.golden", reportText(report))
	cfg, err := config.Parse("xce.toml", []byte(withoutLimits(t, text)))
	if err != nil {
		t.Fatalf("the imported xce.toml does not load:\n%v", err)
	}
	if cfg.Cluster.Name != "research" || cfg.Cluster.DefaultQueue != "normal" {
		t.Errorf("cluster %q, default queue %q", cfg.Cluster.Name, cfg.Cluster.DefaultQueue)
	}
	for i := range 3 {
		again, report2, err := Import("testdata/lsf")
		if err != nil || again != text || reportText(report2) != reportText(report) {
			t.Fatalf("import %d differs from the first", i+2)
		}
	}
}
