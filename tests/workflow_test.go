package tests

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The patterns workflow managers (Snakemake, Nextflow, Toil, dask-jobqueue,
// Cromwell, Parsl) document for driving LSF: each test does what such a
// tool does, with the real commands, and reads the output the way the
// tool's documentation says it does.

// jobIDRE is how the tools take the job ID from bsub's answer.
var jobIDRE = regexp.MustCompile(`Job <(\d+)>`)

// A generated script with #BSUB directives submitted on stdin; the ID is
// taken with the regular expression; the job is polled with
// `bjobs -o "jobid stat exit_code" -noheader` until it ends.
func TestWorkflowSubmitScriptAndPoll(t *testing.T) {
	c := newCluster(t)
	script := "#!/bin/sh\n#BSUB -J wf_step1\n#BSUB -o wf_step1.%J.out\n#BSUB -n 1\n#BSUB -M 100MB\n#BSUB -W 10\necho step1 done\nexit 4\n"
	out := c.must(script, "bsub")
	m := jobIDRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no job ID in %q", out)
	}
	id := m[1]
	var fields []string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		fields = strings.Fields(c.must("", "bjobs", "-o", "jobid stat exit_code", "-noheader", id))
		if len(fields) == 3 && (fields[1] == "DONE" || fields[1] == "EXIT") {
			break
		}
	}
	if len(fields) != 3 || fields[0] != id || fields[1] != "EXIT" || fields[2] != "4" {
		t.Fatalf("poll: %v, want [%s EXIT 4]", fields, id)
	}
	b, err := os.ReadFile(filepath.Join(c.work, "wf_step1."+id+".out"))
	if err != nil || jobOutput(t, string(b)) != "step1 done\n" {
		t.Fatalf("output file: %v %q", err, b)
	}
	// A successful job: DONE, and the exit code column is "-".
	m = jobIDRE.FindStringSubmatch(c.must("#BSUB -J wf_ok\ntrue\n", "bsub"))
	c.waitState(m[1], "DONE")
	if f := strings.Fields(c.must("", "bjobs", "-o", "jobid stat exit_code", "-noheader", m[1])); len(f) != 3 || f[1] != "DONE" || f[2] != "-" {
		t.Fatalf("a DONE job polls as %v", f)
	}
}

// `bjobs -json -o "..."` for several jobs at once: one record per job, the
// fields under the upper-case names, values as strings.
func TestWorkflowPollJSON(t *testing.T) {
	c := newCluster(t)
	a := c.submit("", "-J", "wf_a", "true")
	b := c.submit("", "-J", "wf_b", "-H", "true")
	c.waitState(a, "DONE")
	out := c.must("", "bjobs", "-json", "-o", "jobid job_name stat exit_code", a, b)
	var doc struct {
		Command string              `json:"COMMAND"`
		Jobs    int                 `json:"JOBS"`
		Records []map[string]string `json:"RECORDS"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("bjobs -json: %v\n%s", err, out)
	}
	if doc.Command != "bjobs" || doc.Jobs != 2 || len(doc.Records) != 2 {
		t.Fatalf("bjobs -json: %+v", doc)
	}
	states := map[string]string{}
	for _, r := range doc.Records {
		states[r["JOBID"]] = r["STAT"]
	}
	if states[a] != "DONE" || states[b] != "PSUSP" {
		t.Fatalf("states %v", states)
	}
	c.must("", "bkill", b)
}

// Cancel with bkill and see the job end; a job the cluster no longer
// knows answers "Job <N> is not found" (exit 0), which the tools take as
// gone.
func TestWorkflowCancelAndUnknown(t *testing.T) {
	c := newCluster(t)
	id := jobIDRE.FindStringSubmatch(c.must("", "bsub", "-J", "wf_long", "sleep 600"))[1]
	c.waitState(id, "RUN")
	if out := c.must("", "bkill", id); out != "Job <"+id+"> is being terminated\n" {
		t.Fatalf("bkill: %q", out)
	}
	c.waitState(id, "EXIT")
	if r := c.run("", "bjobs", "-o", "stat", "-noheader", "987654"); r.code != 0 || r.stdout != "" || r.stderr != "Job <987654> is not found\n" {
		t.Fatalf("unknown job: %d %q %q", r.code, r.stdout, r.stderr)
	}
	// Finished jobs are looked up in bacct too (Toil does, when bjobs no
	// longer shows a job): its long form says how the job ended.
	if out := c.must("", "bacct", "-l", id); !strings.Contains(out, "Job <"+id+">") || !strings.Contains(out, "Completed <exit>") {
		t.Fatalf("bacct -l:\n%s", out)
	}
}

// The unit of memory values: tools read LSF_UNIT_FOR_LIMITS from
// $LSF_ENVDIR/lsf.conf and convert their memory requests to it.
func TestWorkflowUnitForLimits(t *testing.T) {
	c := newCluster(t)
	envdir := filepath.Join(c.dir, "state", "conf")
	f, err := os.Open(filepath.Join(envdir, "lsf.conf"))
	if err != nil {
		t.Fatal(err)
	}
	unit := "KB" // LSF's default when the parameter is absent
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "LSF_UNIT_FOR_LIMITS="); ok {
			unit = strings.Trim(v, `"' `)
		}
	}
	f.Close()
	if unit != "MB" {
		t.Fatalf("LSF_UNIT_FOR_LIMITS = %q", unit)
	}
	// 2 GB asked for, written in the unit: 2048 (MB) for -M and rusage;
	// the tool and bsub see the same LSF_ENVDIR.
	t.Setenv("LSF_ENVDIR", envdir)
	id := c.submit("", "-H", "-M", "2048", "-R", "rusage[mem=2048]", "true")
	if lim := strings.TrimSpace(c.must("", "bjobs", "-noheader", "-o", "memlimit", id)); lim != "2 Gbytes" {
		t.Fatalf("memlimit of -M 2048 in MB: %q", lim)
	}
	c.must("", "bkill", id)
}

// Tools that read the default table (Parsl, Cromwell) split its lines on
// blanks: JOBID and STAT are the first and third fields of each line
// after the header; bjobs -w keeps long names whole.
func TestWorkflowDefaultTable(t *testing.T) {
	c := newCluster(t)
	id := c.submit("", "-J", "a_rather_long_workflow_step_name", "-H", "true")
	lines := strings.Split(strings.TrimSpace(c.must("", "bjobs", "-w")), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "JOBID") {
		t.Fatalf("bjobs -w:\n%s", strings.Join(lines, "\n"))
	}
	f := strings.Fields(lines[1])
	if f[0] != id || f[2] != "PSUSP" || f[6] != "a_rather_long_workflow_step_name" {
		t.Fatalf("bjobs -w fields %v", f)
	}
	c.must("", "bkill", id)
}
