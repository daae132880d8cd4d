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

	// The directory holds policy xce cannot translate: without
	// --accept-loss the import fails, naming each item, and writes
	// nothing.
	var out, errOut bytes.Buffer
	cmd := importLSFCommand()
	file := filepath.Join(t.TempDir(), "xce.toml")
	cmd.SetArgs([]string{dir, "-o", file})
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err = cmd.Execute()
	if err == nil || !strings.Contains(err.Error(), "items of policy cannot be translated") {
		t.Fatalf("an import that loses policy: %v", err)
	}
	for _, item := range []string{
		"lsb.users:12: JL/P: policy lost: ",
		"lsb.hosts:10: X86_64: policy lost: ",
		`lsb.queues:77: RES_REQ: policy lost: `,
	} {
		if !strings.Contains(errOut.String(), item) {
			t.Errorf("stderr does not name %q:\n%s", item, errOut.String())
		}
	}
	if _, err := os.Stat(file); err == nil || out.Len() != 0 {
		t.Errorf("a failed import wrote the xce.toml (stdout %q)", out.String())
	}

	out.Reset()
	errOut.Reset()
	cmd = importLSFCommand()
	cmd.SetArgs([]string{dir, "--accept-loss"})
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

	out.Reset()
	cmd = importLSFCommand()
	cmd.SetArgs([]string{dir, "-o", file, "--accept-loss"})
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(file)
	if err != nil || string(got) != string(want) || out.Len() != 0 {
		t.Errorf("-o: file %q (err %v), stdout %q", got, err, out.String())
	}

	// Without a loss the import needs no flag.
	clean := t.TempDir()
	os.WriteFile(filepath.Join(clean, "lsf.conf"), []byte("LSF_UNIT_FOR_LIMITS=MB\n"), 0o644)
	os.WriteFile(filepath.Join(clean, "lsb.queues"), []byte("Begin Queue\nQUEUE_NAME = normal\nINTERACTIVE = ONLY\nEnd Queue\n"), 0o644)
	out.Reset()
	cmd = importLSFCommand()
	cmd.SetArgs([]string{clean})
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	if err := cmd.Execute(); err != nil || !strings.Contains(out.String(), `interactive = "only"`) {
		t.Errorf("an import without loss: %v\n%s", err, out.String())
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
