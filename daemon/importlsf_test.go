package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestImportLSFCommand(t *testing.T) {
	dir := "../lib/config/lsfimport/testdata/lsf"
	want, err := os.ReadFile("../lib/config/lsfimport/testdata/xce.toml.golden")
	if err != nil {
		t.Fatal(err)
	}

	var out, errOut bytes.Buffer
	cmd := importLSFCommand()
	cmd.SetArgs([]string{dir})
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("stdout is not the golden xce.toml:\n%s", out.String())
	}
	if !strings.Contains(errOut.String(), "lsb.queues:10: RES_REQ: deprecated") || !strings.Contains(errOut.String(), "import-lsf: ") {
		t.Errorf("stderr lacks the report:\n%s", errOut.String())
	}

	file := filepath.Join(t.TempDir(), "xce.toml")
	out.Reset()
	cmd = importLSFCommand()
	cmd.SetArgs([]string{dir, "-o", file})
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(file)
	if err != nil || string(got) != string(want) || out.Len() != 0 {
		t.Errorf("-o: file %q (err %v), stdout %q", got, err, out.String())
	}

	cmd = importLSFCommand()
	cmd.SetArgs([]string{filepath.Join(t.TempDir(), "missing")})
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SilenceUsage = true
	if err := cmd.Execute(); err == nil {
		t.Error("a missing directory is not an error")
	}
}
