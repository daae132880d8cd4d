package lsfimport

import (
	"os"
	"path/filepath"
	"testing"

	"xce/lib/config"
)

// FuzzImport checks that whatever lsb.queues, lsb.applications and
// lsb.resources say, Import does not fail on a readable directory and
// its xce.toml loads.
func FuzzImport(f *testing.F) {
	for _, name := range []string{"lsb.queues", "lsb.applications", "lsb.resources", "lsb.hosts"} {
		data, err := os.ReadFile(filepath.Join("testdata/lsf", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(name, string(data))
	}
	f.Add("lsb.queues", "Begin Queue\nQUEUE_NAME = a\nHOSTS = x+1 ~all\nUSERS = a@b [\nPREEMPTION = PREEMPTIVE[a]\nEnd Queue\n")
	f.Add("lsb.resources", "Begin Limit\nNAME USERS PER_HOST SLOTS MEM RESOURCE\nl1 (a b) all 4 20% ([verilog,2])\n- - (node01) - 1024 -\nEnd Limit\n")
	f.Add("lsb.hosts", "Begin Host\nHOST_NAME MXJ JL/U\ndefault 4 1\nnode01 8 99999999999\nEnd Host\n")
	f.Add("lsb.queues", "Begin Queue\nQUEUE_NAME = q\nINTERACTIVE = ONLY\nPJOB_LIMIT = 1.5\nRUNTIME = 1:30/host\nEnd Queue\n")
	shared, err := os.ReadFile("testdata/lsf/lsf.shared")
	if err != nil {
		f.Fatal(err)
	}
	cluster, err := os.ReadFile("testdata/lsf/lsf.cluster.research")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name, text string) {
		switch name {
		case "lsb.queues", "lsb.applications", "lsb.resources", "lsb.hosts", "lsb.users", "lsb.params":
		default:
			return
		}
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "lsf.shared"), shared, 0o644)
		os.WriteFile(filepath.Join(dir, "lsf.cluster.research"), cluster, 0o644)
		os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
		out, _, err := Import(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := config.Parse("xce.toml", []byte(withoutLimits(t, out))); err != nil {
			t.Fatalf("does not load: %v\n%s", err, out)
		}
	})
}
