package tests

import (
	"encoding/json"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The commands and fields that LSF-driving tools call (issue 15, item 3):
// bparams -a/-l, lsadmin showconf/ckconfig, badmin showconf, lsinfo, every
// documented bjobs -o field, bsub -nnodes and bjobs -A with -o/-json.

// fidelityConfig is a cluster with parameters set away from their
// defaults and two site resources.
const fidelityConfig = `[cluster]
name = "fidelity"
default_queue = "normal"
clean_period = "2h"
max_array_size = 5000
orphan_job_term_grace_period = "90s"

[resources.scratch]
description = "Scratch space (GB)"

[resources.licensed]
type = "boolean"
description = "Has the solver licence"

[queues.normal]
priority = 30
exclusive = true
`

func fidelityCluster(t *testing.T) (*cluster, func(string) string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "xce.toml")
	if err := os.WriteFile(path, []byte(fidelityConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCluster(t, "--config", path)
	me := "root"
	if u, err := user.Current(); err == nil {
		me = u.Username
	}
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	norm := func(s string) string {
		s = strings.ReplaceAll(s, c.dir, "DIR")
		s = regexp.MustCompile(`configuration at .*`).ReplaceAllString(s, "configuration at DATE")
		s = maskDates(s)
		return maskKeepingWidth(maskKeepingWidth(s, host, "HOST"), me, "USER")
	}
	return c, norm
}

// TestFidelityBparams: bparams -a and -l print every parameter XCE has
// with LSF's names, as KEY = VALUE lines.
func TestFidelityBparams(t *testing.T) {
	c, norm := fidelityCluster(t)
	golden(t, "fidelity_bparams_a", norm(c.must("", "bparams", "-a")))
	golden(t, "fidelity_bparams_l", norm(c.must("", "bparams", "-l")))
	// What tools grep for (MATLAB's LSF integration, workflow managers).
	out := c.must("", "bparams", "-a")
	for _, want := range []string{"MAX_JOB_ARRAY_SIZE = 5000", "CLEAN_PERIOD = 7200", "JOB_TERMINATE_INTERVAL = 1",
		"ORPHAN_JOB_TERM_GRACE_PERIOD = 90", "RESOURCE_RESERVE_PER_SLOT = N", "MBD_SLEEP_TIME = 1", "DEFAULT_QUEUE = normal"} {
		if !regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(want) + `$`).MatchString(out) {
			t.Errorf("bparams -a has no line %q:\n%s", want, out)
		}
	}
	if r := c.run("", "bparams", "extra"); r.code != 255 || !strings.HasPrefix(r.stderr, "Usage: bparams [-a] [-l]") {
		t.Errorf("bparams extra: %d %q", r.code, r.stderr)
	}
}

// TestFidelityLsadmin: lsadmin showconf lim and badmin showconf mbd print
// lsf.conf's parameters under LSF's heading; lsadmin ckconfig checks the
// configuration with LSF's messages.
func TestFidelityLsadmin(t *testing.T) {
	c, norm := fidelityCluster(t)
	env := []string{"LSF_ENVDIR=" + filepath.Join(c.dir, "state", "conf")}
	r := c.runEnv(env, "lsadmin", "showconf", "lim")
	if r.code != 0 {
		t.Fatalf("lsadmin showconf lim: %d %s", r.code, r.stderr)
	}
	golden(t, "fidelity_showconf_lim", norm(r.stdout))
	r = c.runEnv(env, "badmin", "showconf", "mbd")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "MBD configuration at ") || !strings.Contains(r.stdout, "\n    LSF_UNIT_FOR_LIMITS=MB\n") {
		t.Errorf("badmin showconf mbd: %d %q %s", r.code, r.stdout, r.stderr)
	}
	r = c.runEnv(env, "lsadmin", "showconf", "mbd")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "MBD configuration at ") {
		t.Errorf("lsadmin showconf mbd: %d %q %s", r.code, r.stdout, r.stderr)
	}
	r = c.runEnv(env, "badmin", "showconf", "sbd", "hostA")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "SBD configuration for host <hostA> at ") {
		t.Errorf("badmin showconf sbd hostA: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if r = c.runEnv(env, "lsadmin", "showconf", "res"); r.code != 255 || !strings.HasPrefix(r.stderr, "Usage: lsadmin") {
		t.Errorf("lsadmin showconf res: %d %q", r.code, r.stderr)
	}
	r = c.runEnv(env, "lsadmin", "ckconfig")
	if r.code != 0 || r.stdout != "\nChecking configuration files ...\nNo errors found.\n" {
		t.Errorf("lsadmin ckconfig: %d %q %s", r.code, r.stdout, r.stderr)
	}
	// A broken lsf.conf is a fatal error that names the file.
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "lsf.conf"), []byte("LSF_UNIT_FOR_LIMITS=parsecs\n"), 0o644)
	r = c.runEnv([]string{"LSF_ENVDIR=" + bad}, "lsadmin", "ckconfig")
	if r.code != 255 || !strings.HasPrefix(r.stdout, "\nChecking configuration files ...\nThere are fatal errors.\n\n") || !strings.Contains(r.stdout, "lsf.conf") {
		t.Errorf("lsadmin ckconfig, bad lsf.conf: %d %q", r.code, r.stdout)
	}
	if r = c.run("", "lsadmin", "limstartup"); r.code != 255 || !strings.HasPrefix(r.stderr, "limstartup: Invalid command") {
		t.Errorf("lsadmin limstartup: %d %q", r.code, r.stderr)
	}
}

// TestFidelityLsinfo: lsinfo's resource table (built-in and configured
// resources), -l, and the host types and models the hosts report.
func TestFidelityLsinfo(t *testing.T) {
	c, norm := fidelityCluster(t)
	golden(t, "fidelity_lsinfo_r", norm(c.must("", "lsinfo", "-r")))
	golden(t, "fidelity_lsinfo_l", norm(c.must("", "lsinfo", "-l", "r15s", "scratch", "licensed")))
	hosts := strings.Fields(strings.Split(c.must("", "lshosts", "-w"), "\n")[1])
	typ, model := hosts[1], hosts[2]
	if got := c.must("", "lsinfo", "-t"); got != "TYPE_NAME\n"+typ+"\n" {
		t.Errorf("lsinfo -t: %q, want the type %s", got, typ)
	}
	m := c.must("", "lsinfo", "-m")
	if !regexp.MustCompile(`^MODEL_NAME      CPU_FACTOR      ARCHITECTURE\n` + regexp.QuoteMeta(model) + ` +\d+\.\d\d      -\n$`).MatchString(m) {
		t.Errorf("lsinfo -m: %q, want the model %s", m, model)
	}
	all := c.must("", "lsinfo")
	if !strings.HasPrefix(all, c.must("", "lsinfo", "-r")+"\nTYPE_NAME\n") || !strings.HasSuffix(all, "\n"+m) {
		t.Errorf("lsinfo: %q", all)
	}
	if r := c.run("", "lsinfo", "nosuch"); r.code != 255 || r.stderr != "nosuch: Resource name not found\n" {
		t.Errorf("lsinfo nosuch: %d %q", r.code, r.stderr)
	}
}

// lsfFieldNames is every bjobs -o field of LSF 10.1 (the Fix Pack 14
// table and the later additions).
var lsfFieldNames = strings.Fields(`jobid jobindex stat user user_group queue job_name job_description proj_name
	application service_class job_group job_priority rsvid esub kill_reason suspend_reason resume_reason
	kill_issue_host suspend_issue_host resume_issue_host dependency pend_reason charged_saap command
	pre_exec_command post_exec_command resize_notification_command pids exit_code exit_reason interactive
	from_host first_host exec_host nexec_host ask_hosts alloc_slot nalloc_slot host_file exclusive nreq_slot
	submit_time start_time estimated_start_time specified_start_time specified_terminate_time time_left
	finish_time estimated_run_time ru_utime ru_stime %complete warning_action action_warning_time pendstate
	pend_time ependtime ipendtime estimated_sim_start_time effective_plimit plimit_remain effective_eplimit
	eplimit_remain cpu_used run_time idle_factor exception_status slots mem max_mem avg_mem memlimit swap
	swaplimit gpu_num gpu_mode j_exclusive gpu_alloc nthreads hrusage min_req_proc max_req_proc
	effective_resreq combined_resreq network_req filelimit corelimit stacklimit processlimit runtimelimit
	plimit eplimit input_file output_file error_file output_dir sub_cwd exec_home exec_cwd licproject
	forward_cluster forward_time srcjobid dstjobid source_cluster energy gpfsio cpu_peak cpu_efficiency
	cpu_peak_efficiency mem_efficiency average_cpu_efficiency cpu_peak_reached_duration`)

// lsfFieldAliases are the documented aliases.
var lsfFieldAliases = strings.Fields(`id ugroup name description proj project app sla group priority saap cmd
	pre_cmd post_cmd resize_cmd estart_time sstart_time sterminate_time ertime warn_act warn_time
	esstart_time except_stat gnum gmode j_excl galloc eresreq cresreq fwd_cluster fwd_time srcluster`)

// TestFidelityBjobsFields: bjobs -o accepts every documented field and
// alias; a field without a value is "-" in the table and "" in -json.
func TestFidelityBjobsFields(t *testing.T) {
	c, norm := fidelityCluster(t)
	id := c.submit("", "-H", "-J", "held", "sleep", "1")
	for _, f := range append(append([]string{}, lsfFieldNames...), lsfFieldAliases...) {
		if r := c.run("", "bjobs", "-noheader", "-o", f+":", id); r.code != 0 || strings.TrimSpace(r.stdout) == "" {
			t.Errorf("bjobs -o %s: %d %q %q", f, r.code, r.stdout, r.stderr)
		}
	}
	out := c.must("", "bjobs", "-json", "-o", strings.Join(lsfFieldNames, " "), id)
	var doc struct {
		JOBS    int
		RECORDS []map[string]string
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.JOBS != 1 || len(doc.RECORDS) != 1 {
		t.Fatalf("bjobs -json: %v\n%s", err, out)
	}
	for _, f := range lsfFieldNames {
		if v, ok := doc.RECORDS[0][strings.ToUpper(f)]; !ok || v == "-" {
			t.Errorf("-json %s: %q (present %v)", f, v, ok)
		}
	}
	if doc.RECORDS[0]["SUSPEND_REASON"] != "" || doc.RECORDS[0]["GPU_NUM"] != "" || doc.RECORDS[0]["PENDSTATE"] != "IPEND" {
		t.Errorf("-json values: %v", doc.RECORDS[0])
	}
	golden(t, "fidelity_bjobs_fields", norm(c.must("", "bjobs", "-o",
		"jobid stat pendstate suspend_reason exit_reason kill_reason resize_notification_command gpu_num gpu_mode gpu_alloc j_exclusive ru_utime energy rsvid combined_resreq delimiter='|'", id)))
	if r := c.run("", "bjobs", "-o", "jobid nosuch", id); r.code != 255 || r.stderr != "nosuch in the format string is not a valid field name.\n" {
		t.Errorf("unknown field: %d %q", r.code, r.stderr)
	}
}

// TestFidelityNNodes: bsub -nnodes N runs on N whole hosts: N tasks one
// per host, exclusive (so, as for -x, in a queue that accepts exclusive
// jobs).
func TestFidelityNNodes(t *testing.T) {
	c, _ := fidelityCluster(t)
	id := c.submit("", "-nnodes", "1", "sh", "-c", "exit 0")
	c.waitState(id, "DONE")
	got := c.must("", "bjobs", "-a", "-noheader", "-o", "exclusive nreq_slot combined_resreq delimiter='|'", id)
	if got != "Y|1|select[type == local] order[r15s:pg] span[ptile=1]\n" {
		t.Errorf("-nnodes 1: %q", got)
	}
	script := "#!/bin/sh\n#BSUB -nnodes 1\n#BSUB -J parsl\ntrue\n"
	id = c.submit(script)
	c.waitState(id, "DONE")
	if got := c.must("", "bjobs", "-a", "-noheader", "-o", "exclusive nreq_slot", id); strings.Join(strings.Fields(got), " ") != "Y 1" {
		t.Errorf("#BSUB -nnodes 1: %q", got)
	}
	if r := c.run("", "bsub", "-nnodes", "2", "-n", "2", "true"); r.code != 255 || !strings.Contains(r.stderr, "The -n and -nnodes options are mutually exclusive") {
		t.Errorf("-nnodes with -n: %d %q", r.code, r.stderr)
	}
}

// TestFidelityArrays: bjobs -A honours -o, -json, -noheader and -w.
func TestFidelityArrays(t *testing.T) {
	c, norm := fidelityCluster(t)
	id := c.submit("", "-H", "-J", "a_long_sweep_name[1-3]", "true")
	got := c.must("", "bjobs", "-A", "-o", "jobid array_spec queue njobs pend psusp delimiter=','")
	if want := "JOBID,ARRAY_SPEC,QUEUE,NJOBS,PEND,PSUSP\n" + id + ",a_long_sweep_name[1-3],normal,3,0,3\n"; got != want {
		t.Errorf("bjobs -A -o: %q, want %q", got, want)
	}
	var doc struct {
		COMMAND string
		JOBS    int
		RECORDS []map[string]string
	}
	out := c.must("", "bjobs", "-A", "-json")
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.COMMAND != "bjobs" || doc.JOBS != 1 ||
		doc.RECORDS[0]["JOBID"] != id || doc.RECORDS[0]["NJOBS"] != "3" || doc.RECORDS[0]["PSUSP"] != "3" || doc.RECORDS[0]["OWNER"] == "" {
		t.Errorf("bjobs -A -json: %v\n%s", err, out)
	}
	out = c.must("", "bjobs", "-A", "-json", "-o", "jobid stat job_name")
	doc.RECORDS = nil
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.RECORDS[0]["STAT"] != "PSUSP" || len(doc.RECORDS[0]) != 3 {
		t.Errorf("bjobs -A -json -o: %v\n%s", err, out)
	}
	golden(t, "fidelity_bjobs_A_noheader", norm(c.must("", "bjobs", "-A", "-noheader")))
	golden(t, "fidelity_bjobs_A_w", norm(c.must("", "bjobs", "-A", "-w")))
}
