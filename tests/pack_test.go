package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// bsub -pack, LSF's job packs, as a user's shell runs it: the file's jobs
// acknowledged in order with consecutive ids; a refused job ends the pack
// unless LSB_PACK_SKIP_ERROR=Y; LSB_MAX_PACK_JOBS sizes the calls (0
// disables packs); nothing else may be given with -pack.
func TestBsubPack(t *testing.T) {
	c := newCluster(t)
	dir := t.TempDir()
	pack := filepath.Join(dir, "jobs.pack")
	if err := os.WriteFile(pack, []byte(`# a job pack
-J one -H true

-q nosuch -H true
-H -w "done(one)" echo "a b"
-I true
-H -J "arr[1-3]" true
`), 0o644); err != nil {
		t.Fatal(err)
	}
	envdir := func(conf string) []string {
		d := t.TempDir()
		if err := os.WriteFile(filepath.Join(d, "lsf.conf"), []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		return []string{"LSF_ENVDIR=" + d}
	}
	ack := regexp.MustCompile(`(?m)^Job <(\d+)> is submitted to (default )?queue <normal>\.$`)
	ids := func(out string) []int64 {
		var ids []int64
		for _, m := range ack.FindAllStringSubmatch(out, -1) {
			id, _ := strconv.ParseInt(m[1], 10, 64)
			ids = append(ids, id)
		}
		return ids
	}

	// Without LSB_PACK_SKIP_ERROR the refused second job ends the pack.
	r := c.runEnv(envdir(""), "bsub", "-pack", pack)
	if got := ids(r.stdout); r.code != 255 || len(got) != 1 || !strings.Contains(r.stderr, "nosuch") ||
		strings.Count(r.stderr, "Job not submitted.") != 1 {
		t.Fatalf("bsub -pack: exit %d, jobs %v\nstdout: %s\nstderr: %s", r.code, got, r.stdout, r.stderr)
	}

	// With it every line is tried: the -I line and the queue refused, the
	// dependent job and the array submitted.
	r = c.runEnv(envdir("LSB_PACK_SKIP_ERROR=Y\n"), "bsub", "-pack", pack)
	got := ids(r.stdout)
	if r.code != 255 || len(got) != 3 || strings.Count(r.stderr, "Job not submitted.") != 2 ||
		!strings.Contains(r.stderr, "jobs.pack, line 6: -I: not supported in a job pack") {
		t.Fatalf("bsub -pack, skipping errors: exit %d, jobs %v\nstdout: %s\nstderr: %s", r.code, got, r.stdout, r.stderr)
	}
	if got[1] != got[0]+1 || got[2] != got[1]+1 {
		t.Errorf("ids %v not consecutive in the file's order", got)
	}
	dep := strconv.FormatInt(got[1], 10)
	if cmd := strings.TrimSpace(c.must("", "bjobs", "-noheader", "-o", "cmd", dep)); cmd != `echo "a b"` {
		t.Errorf("the dependent job's command: %q", cmd)
	}
	if n := strings.Count(c.must("", "bjobs", "-noheader", "-o", "jobid", strconv.FormatInt(got[2], 10)), "\n"); n != 3 {
		t.Errorf("the array has %d elements, want 3", n)
	}

	// LSB_MAX_PACK_JOBS=2: five jobs in three calls, all acknowledged.
	var five strings.Builder
	for range 5 {
		five.WriteString("-H true\n")
	}
	if err := os.WriteFile(pack, []byte(five.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r = c.runEnv(envdir("LSB_MAX_PACK_JOBS=2\n"), "bsub", "-pack", pack)
	if got := ids(r.stdout); r.code != 0 || len(got) != 5 || got[4] != got[0]+4 {
		t.Errorf("five jobs two at a time: exit %d, jobs %v, stderr %s", r.code, got, r.stderr)
	}
	r = c.runEnv(envdir("LSB_MAX_PACK_JOBS=0\n"), "bsub", "-pack", pack)
	if r.code != 255 || !strings.Contains(r.stderr, "Job packs are disabled") || r.stdout != "" {
		t.Errorf("packs disabled: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = c.run("", "bsub", "-pack", pack, "-q", "normal")
	if r.code != 255 || !strings.Contains(r.stderr, "-pack: no other bsub option") || r.stdout != "" {
		t.Errorf("-pack with another option: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = c.run("", "bsub", "-pack", filepath.Join(dir, "missing"))
	if r.code != 255 || !strings.Contains(r.stderr, "no such file or directory. Job not submitted.") {
		t.Errorf("a missing pack file: exit %d, stderr %q", r.code, r.stderr)
	}
}
