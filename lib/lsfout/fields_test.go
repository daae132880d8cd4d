package lsfout

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"xce/lib/api"
)

// lsfJobFields is every bjobs -o field of the LSF 10.1 Fix Pack 14 table
// (with the later additions), its aliases and its recommended width (0:
// not documented).
var lsfJobFields = []struct {
	name    string
	aliases []string
	width   int
}{
	{"jobid", []string{"id"}, 7}, {"jobindex", nil, 8}, {"stat", nil, 5}, {"user", nil, 7},
	{"user_group", []string{"ugroup"}, 15}, {"queue", nil, 10}, {"job_name", []string{"name"}, 10},
	{"job_description", []string{"description"}, 17}, {"proj_name", []string{"proj", "project"}, 11},
	{"application", []string{"app"}, 13}, {"service_class", []string{"sla"}, 13}, {"job_group", []string{"group"}, 10},
	{"job_priority", []string{"priority"}, 12}, {"rsvid", nil, 40}, {"esub", nil, 20}, {"kill_reason", nil, 50},
	{"suspend_reason", nil, 50}, {"resume_reason", nil, 50}, {"kill_issue_host", nil, 50},
	{"suspend_issue_host", nil, 50}, {"resume_issue_host", nil, 50}, {"dependency", nil, 15},
	{"pend_reason", nil, 11}, {"charged_saap", []string{"saap"}, 50}, {"command", []string{"cmd"}, 15},
	{"pre_exec_command", []string{"pre_cmd"}, 16}, {"post_exec_command", []string{"post_cmd"}, 17},
	{"resize_notification_command", []string{"resize_cmd"}, 27}, {"pids", nil, 20}, {"exit_code", nil, 10},
	{"exit_reason", nil, 50}, {"interactive", nil, 11}, {"from_host", nil, 11}, {"first_host", nil, 11},
	{"exec_host", nil, 11}, {"nexec_host", nil, 10}, {"ask_hosts", nil, 30}, {"alloc_slot", nil, 20},
	{"nalloc_slot", nil, 10}, {"host_file", nil, 10}, {"exclusive", nil, 13}, {"nreq_slot", nil, 10},
	{"submit_time", nil, 15}, {"start_time", nil, 15}, {"estimated_start_time", []string{"estart_time"}, 20},
	{"specified_start_time", []string{"sstart_time"}, 20}, {"specified_terminate_time", []string{"sterminate_time"}, 24},
	{"time_left", nil, 11}, {"finish_time", nil, 16}, {"estimated_run_time", []string{"ertime"}, 20},
	{"ru_utime", nil, 12}, {"ru_stime", nil, 12}, {"%complete", nil, 11}, {"warning_action", []string{"warn_act"}, 15},
	{"action_warning_time", []string{"warn_time"}, 19}, {"pendstate", nil, 9}, {"pend_time", nil, 12},
	{"ependtime", nil, 12}, {"ipendtime", nil, 12}, {"estimated_sim_start_time", []string{"esstart_time"}, 24},
	{"effective_plimit", nil, 18}, {"plimit_remain", nil, 15}, {"effective_eplimit", nil, 19},
	{"eplimit_remain", nil, 16}, {"cpu_used", nil, 10}, {"run_time", nil, 15}, {"idle_factor", nil, 11},
	{"exception_status", []string{"except_stat"}, 16}, {"slots", nil, 5}, {"mem", nil, 10}, {"max_mem", nil, 10},
	{"avg_mem", nil, 10}, {"memlimit", nil, 10}, {"swap", nil, 10}, {"swaplimit", nil, 10},
	{"gpu_num", []string{"gnum"}, 10}, {"gpu_mode", []string{"gmode"}, 20}, {"j_exclusive", []string{"j_excl"}, 15},
	{"gpu_alloc", []string{"galloc"}, 30}, {"nthreads", nil, 10}, {"hrusage", nil, 50}, {"min_req_proc", nil, 12},
	{"max_req_proc", nil, 12}, {"effective_resreq", []string{"eresreq"}, 17}, {"combined_resreq", []string{"cresreq"}, 20},
	{"network_req", nil, 15}, {"filelimit", nil, 10}, {"corelimit", nil, 10}, {"stacklimit", nil, 10},
	{"processlimit", nil, 12}, {"runtimelimit", nil, 12}, {"plimit", nil, 10}, {"eplimit", nil, 10},
	{"input_file", nil, 10}, {"output_file", nil, 11}, {"error_file", nil, 10}, {"output_dir", nil, 15},
	{"sub_cwd", nil, 10}, {"exec_home", nil, 10}, {"exec_cwd", nil, 10}, {"licproject", nil, 20},
	{"forward_cluster", []string{"fwd_cluster"}, 15}, {"forward_time", []string{"fwd_time"}, 15},
	{"srcjobid", nil, 8}, {"dstjobid", nil, 8}, {"source_cluster", []string{"srcluster"}, 15},
	{"energy", nil, 0}, {"gpfsio", nil, 0}, {"cpu_peak", nil, 10}, {"cpu_efficiency", nil, 10},
	{"cpu_peak_efficiency", nil, 10}, {"mem_efficiency", nil, 10}, {"average_cpu_efficiency", nil, 10},
	{"cpu_peak_reached_duration", nil, 10},
}

// TestEveryLSFFieldAccepted: every documented field and alias parses, with
// its documented recommended width, and a field XCE has no value for is
// "-" in the table and "" in -json, never refused.
func TestEveryLSFFieldAccepted(t *testing.T) {
	bare := &api.Job{JobId: 7, State: api.JobState_PEND, Spec: &api.JobSpec{User: "alice", Queue: "normal"}}
	for _, f := range lsfJobFields {
		for _, name := range append([]string{f.name}, f.aliases...) {
			format, err := ParseFormat(name + ":")
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if len(format.cols) != 1 || format.cols[0].f.name != f.name {
				t.Errorf("%s: parsed as %v, want field %s", name, format.cols[0].f.name, f.name)
				continue
			}
			if f.width > 0 && format.cols[0].width != f.width {
				t.Errorf("%s: recommended width %d, want %d", name, format.cols[0].width, f.width)
			}
		}
		format, _ := ParseFormat(f.name)
		format.Now = time.Unix(1700000000, 0)
		var b bytes.Buffer
		if err := format.Write(&b, []*api.Job{bare}, true); err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(b.String()) == "" {
			t.Errorf("%s: printed nothing, want a value or -", f.name)
		}
		b.Reset()
		if err := format.WriteJSON(&b, []*api.Job{bare}, nil); err != nil {
			t.Fatal(err)
		}
		var doc struct{ RECORDS []map[string]string }
		if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatalf("%s: -json: %v\n%s", f.name, err, b.String())
		}
		if len(doc.RECORDS) != 1 {
			t.Fatalf("%s: -json records %v", f.name, doc.RECORDS)
		}
		if v, ok := doc.RECORDS[0][strings.ToUpper(f.name)]; !ok || v == "-" {
			t.Errorf("%s: -json %q (present %v), want the value or \"\"", f.name, v, ok)
		}
	}
}

// TestNewFieldValues: the fields XCE can fill from what it has.
func TestNewFieldValues(t *testing.T) {
	stopped := &api.Job{JobId: 8, State: api.JobState_USUSP, Spec: &api.JobSpec{User: "alice"},
		Effective: &api.JobSpec{ResReq: []string{"select[mem>100]", "rusage[mem=10]"}}}
	held := &api.Job{JobId: 9, State: api.JobState_PSUSP, Spec: &api.JobSpec{User: "alice"}}
	waiting := &api.Job{JobId: 10, State: api.JobState_PEND, Spec: &api.JobSpec{User: "alice"}, PendReason: "New job is waiting for scheduling"}
	format, err := ParseFormat("jobid suspend_reason pendstate combined_resreq delimiter='|'")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := format.Write(&b, []*api.Job{stopped, held, waiting}, false); err != nil {
		t.Fatal(err)
	}
	want := "JOBID|SUSPEND_REASON|PENDSTATE|COMBINED_RESREQ\n" +
		"8|The job was suspended by user|NOTPEND|select[mem > 100 && type == local] order[r15s:pg] rusage[mem=10.00]\n" +
		"9|-|IPEND|select[type == local] order[r15s:pg]\n" +
		"10|-|EPEND|select[type == local] order[r15s:pg]\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestArraysFormat: bjobs -A -o takes bjobs -A's columns and the bjobs
// fields; -json gives the counts as strings.
func TestArraysFormat(t *testing.T) {
	el := func(i int32, s api.JobState) *api.Job {
		return &api.Job{JobId: 5, ArrayIndex: i, State: s, Spec: &api.JobSpec{User: "alice", JobName: "sweep", ArraySpec: "[1-3]", Queue: "normal"}}
	}
	arrays := CountArrays([]*api.Job{el(1, api.JobState_DONE), el(2, api.JobState_RUN), el(3, api.JobState_PEND)})
	f, err := ParseArraysFormat("jobid array_spec queue njobs pend done run delimiter=','")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := f.Write(&b, arrays, false); err != nil {
		t.Fatal(err)
	}
	if want := "JOBID,ARRAY_SPEC,QUEUE,NJOBS,PEND,DONE,RUN\n5,sweep[1-3],normal,3,1,1,1\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	f, _ = ParseArraysFormat(ArraysColumns)
	b.Reset()
	if err := f.WriteJSON(&b, arrays); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		JOBS    int
		RECORDS []map[string]string
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil || doc.JOBS != 1 || doc.RECORDS[0]["NJOBS"] != "3" || doc.RECORDS[0]["ARRAY_SPEC"] != "sweep[1-3]" {
		t.Errorf("-json: %v %+v\n%s", err, doc, b.String())
	}
}
