package lsfout

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
)

func parseFormat(t *testing.T, spec string) *Format {
	t.Helper()
	f, err := ParseFormat(spec)
	if err != nil {
		t.Fatalf("ParseFormat(%q): %v", spec, err)
	}
	f.Now, f.Location = testNow, testZone
	return f
}

func writeFormat(t *testing.T, spec string, jobs []*api.Job, noheader bool) string {
	t.Helper()
	var b bytes.Buffer
	if err := parseFormat(t, spec).Write(&b, jobs, noheader); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func writeFormatJSON(t *testing.T, spec string, jobs []*api.Job, notFound []string) string {
	t.Helper()
	var b bytes.Buffer
	if err := parseFormat(t, spec).WriteJSON(&b, jobs, notFound); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Every name and alias of the table in output-formats.md section 4 and of
// the listed 10.1 additions is accepted, in any case.
func TestParseFormatKnowsEveryField(t *testing.T) {
	names := []string{
		"jobid", "id", "stat", "user", "user_group", "ugroup", "queue", "job_name", "name",
		"job_description", "description", "proj_name", "proj", "project", "job_group", "group",
		"dependency", "command", "cmd", "pre_exec_command", "pre_cmd", "pids", "exit_code",
		"from_host", "first_host", "exec_host", "nexec_host", "submit_time", "start_time",
		"estimated_start_time", "estart_time", "specified_start_time", "sstart_time",
		"specified_terminate_time", "sterminate_time", "time_left", "finish_time", "%complete",
		"cpu_used", "slots", "run_time", "idle_factor", "mem", "memlimit", "swap", "swaplimit",
		"min_req_proc", "max_req_proc", "filelimit", "corelimit", "stacklimit", "processlimit",
		"input_file", "output_file", "error_file", "sub_cwd", "exec_home", "exec_cwd",
		"effective_resreq", "eresreq",
		"jobindex", "application", "app", "service_class", "sla", "job_priority", "priority",
		"post_exec_command", "post_cmd", "resize_notification_command", "resize_cmd",
		"exit_reason", "pend_reason", "kill_reason", "interactive", "ask_hosts", "alloc_slot",
		"nalloc_slot", "nreq_slot", "host_file", "exclusive", "max_mem", "avg_mem",
		"runtimelimit", "plimit", "eplimit", "pend_time", "ependtime", "ipendtime",
		"estimated_run_time", "ertime", "ru_utime", "ru_stime", "warning_action", "warn_act",
		"action_warning_time", "warn_time", "exception_status", "except_stat", "output_dir",
		"licproject", "forward_cluster", "fwd_cluster", "forward_time", "fwd_time", "srcjobid",
		"dstjobid", "source_cluster", "nthreads", "hrusage", "gpu_num", "gpu_mode",
		"j_exclusive", "gpu_alloc", "cpu_peak", "cpu_efficiency", "mem_efficiency",
	}
	for _, n := range names {
		for _, spelling := range []string{n, strings.ToUpper(n)} {
			if _, err := ParseFormat(spelling); err != nil {
				t.Errorf("ParseFormat(%q): %v", spelling, err)
			}
		}
	}
	f := parseFormat(t, "all")
	if len(f.cols) != len(fields()) {
		t.Errorf("all: %d columns, want %d", len(f.cols), len(fields()))
	}
}

func TestParseFormatAliasHeader(t *testing.T) {
	got := writeFormat(t, "ID Name PROJ ugroup cmd estart_time", nil, false)
	if want := "JOBID JOB_NAME PROJ_NAME USER_GROUP COMMAND ESTIMATED_START_TIME\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestParseFormatErrors(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"jobid foo stat", "foo in the format string is not a valid field name."},
		{"jobid Foo:10", "Foo in the format string is not a valid field name."},
		{"jobid:x", "jobid:x: the output width must be a positive number."},
		{"jobid:0", "jobid:0: the output width must be a positive number."},
		{"mem:10:Q", "mem:10:Q: <Q> is not a valid unit prefix (KB, MB, GB, TB, PB, EB, ZB or S)."},
		{"stat:5:G", "stat:5:G: a unit prefix applies only to the memory fields."},
		{"", "The format string names no field."},
		{"jobid delimiter='ab'", "The delimiter must be a single character."},
		{"jobid delimiter=,", "delimiter= must be followed by a quoted character, as in delimiter=','."},
	} {
		_, err := ParseFormat(tc.spec)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseFormat(%q) error = %v, want %q", tc.spec, err, tc.want)
		}
	}
}

// Widths: none = unlimited, "name:" = recommended, "name:N" cuts (JOB_NAME
// at the front, with "*"), "name:-N" right-justifies.
func TestFormatWidths(t *testing.T) {
	j := jobPending()
	for _, tc := range []struct{ spec, want string }{
		{"job_name", "verylongjobname_abc\n"},
		{"job_name:", "*bname_abc\n"},
		{"job_name:6", "*e_abc\n"},
		{"job_name:25", "verylongjobname_abc      \n"},
		{"job_name:-25", "      verylongjobname_abc\n"},
		{"command:5", "./bui\n"},
		{"jobid:-7 stat:", "   1235 PEND \n"},
		{"queue:3 user", "nor user1\n"},
		{"exec_host: stat", "-           PEND\n"},
	} {
		if got := writeFormat(t, tc.spec, []*api.Job{j}, true); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.spec, got, tc.want)
		}
	}
	// the header is fitted like the values
	if got := writeFormat(t, "jobid:-7 stat:3 job_name:4", nil, false); got != "  JOBID STA JOB_\n" {
		t.Errorf("header: got %q", got)
	}
}

func TestFormatDelimiter(t *testing.T) {
	for _, spec := range []string{`jobid stat:3 job_name:5 queue delimiter='|'`, `jobid stat:3 job_name:5 queue DELIMITER="|"`} {
		got := writeFormat(t, spec, []*api.Job{jobPending()}, false)
		if want := "JOBID|STA|JOB_N|QUEUE\n1235|PEN|*_abc|normal\n"; got != want {
			t.Errorf("%s: got %q, want %q", spec, got, want)
		}
	}
}

func TestFormatMem(t *testing.T) {
	for _, tc := range []struct {
		kb         int64
		unit, want string
	}{
		{0, "", "0 Mbytes"},
		{512, "", "0.5 Mbytes"},
		{120 * 1024, "", "120 Mbytes"},
		{5_452_595, "", "5.2 Gbytes"},
		{3 * 1024 * 1024 * 1024, "", "3 Tbytes"},
		{10 * 1024, "G", "0.01G"}, // the IBM example: 10M shown in G
		{1, "G", "0.01G"},         // the third decimal is rounded up
		{1024 * 1024, "G", "1.00G"},
		{1536, "K", "1536.00K"},
		{1536, "M", "1.50M"},
		{5_452_595, "S", "5.2G"},
		{100, "S", "0.1M"},
	} {
		if got := formatMem(tc.kb, tc.unit); got != tc.want {
			t.Errorf("formatMem(%d, %q) = %q, want %q", tc.kb, tc.unit, got, tc.want)
		}
	}
	// "max_mem::MB" has the recommended width (10)
	got := writeFormat(t, "max_mem max_mem::MB mem:15:G memlimit swap avg_mem:-12:s", []*api.Job{jobParallel(), jobPending()}, true)
	want := "" +
		"5.2 Gbytes 5324.80M   2.39G           4 Gbytes 0 Mbytes         2.9G\n" +
		"- -          -               - -            -\n"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// The value formats quoted from real 10.1 output in section 4.
func TestFormatValues(t *testing.T) {
	run := jobRunning()
	done := jobArrayElement()
	exit := jobKilled()
	for _, tc := range []struct {
		spec string
		job  *api.Job
		want string
	}{
		{"run_time", run, "9472 second(s)"}, // 09:22:08 to 12:00:00
		{"run_time", done, "60 second(s)"},
		{"run_time", jobPending(), "0 second(s)"},
		{"submit_time", run, "Oct 22 09:22"},
		{"start_time", jobParallel(), "Oct  2 10:06"},
		{"finish_time", done, "Oct 22 08:01"},
		{"finish_time", run, "Oct 22 10:22 L"},
		{"time_left", run, "0:00 L"},
		{"time_left", jobParallel(), "0:00 L"},
		{"runtimelimit", run, "60.0"},
		{"exec_host", jobParallel(), "4*hostC:4*hostD"},
		{"pids", run, "6395,6397,6399"},
		{"exit_code", done, "-"},
		{"exit_code", exit, "140"},
		{"exit_reason", exit, "TERM_RUNLIMIT: job killed after reaching LSF run time limit"},
		{"effective_resreq", run, "select[type == local] order[r15s:pg] "},
		{"effective_resreq", jobPending(), "-"},
		{"sub_cwd", run, "$HOME/work"},
		{"sub_cwd", jobHeld(), "$HOME"},
		{"job_name", done, "arr[3]"},
		{"jobid jobindex", done, "1240 3"},
		{"slots nalloc_slot nreq_slot", jobParallel(), "8 8 8"},
		{"slots nalloc_slot nreq_slot", jobPending(), "4 - 4"},
		{"cpu_used", run, "62.4 second(s)"},
		{"idle_factor", done, "0.97"},
		{"pend_reason", jobPending(), "Job's resource requirements not satisfied: 2 hosts; Closed by LSF administrator: 1 host"},
		{"pend_reason", run, "-"},
		{"pend_time", jobPending(), "9420"},
		{"pend_time", done, "2"},
		{"proj_name application job_priority", jobParallel(), "physics mpi 50"},
		{"command", jobHeld(), "#!/bin/sh; #BSUB -q night; # prepare; cd /tmp; ./nightly.sh"},
		{"specified_start_time", jobHeld(), "Oct 23 01:00"},
		{"exclusive ask_hosts", jobParallel(), "Y hostC hostD"},
		{"%complete", run, "263% L"},
		{"cpu_efficiency", jobParallel(), "0.03%"}, // 1 CPU hour over 8 slots for 20 days
		{"nexec_host first_host", jobParallel(), "2 hostC"},
		{"stat", jobStopped(), "USUSP"},
		{"queue", jobStopped(), "gpu"},
		{"gpu_num service_class", run, "- -"},
	} {
		got := strings.TrimSuffix(writeFormat(t, tc.spec, []*api.Job{tc.job}, true), "\n")
		if got != tc.want {
			t.Errorf("%q for job %s: got %q, want %q", tc.spec, JobIDString(tc.job), got, tc.want)
		}
	}
	// -hms
	f := parseFormat(t, "run_time cpu_used time_left")
	f.HMS = true
	j := jobParallel()
	j.Effective.RunLimitSec = 30 * 24 * 3600
	var b bytes.Buffer
	if err := f.Write(&b, []*api.Job{j}, true); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "481:53:30 01:00:00 238:06:30 L\n"; got != want {
		t.Errorf("-hms: got %q, want %q", got, want)
	}
}

// The JSON example of output-formats.md section 5, byte for byte.
func TestFormatJSONSpecExample(t *testing.T) {
	j := &api.Job{
		JobId: 22005, State: api.JobState_DONE, ExecCwd: "/home/otptest",
		Spec: &api.JobSpec{Command: "ls -l"},
	}
	got := writeFormatJSON(t, "jobid job_name stat exec_cwd exit_code pend_reason", []*api.Job{j}, nil)
	want := `{
  "COMMAND":"bjobs",
  "JOBS":1,
  "RECORDS":[
    {
      "JOBID":"22005",
      "JOB_NAME":"ls -l",
      "STAT":"DONE",
      "EXEC_CWD":"\/home\/otptest",
      "EXIT_CODE":"",
      "PEND_REASON":""
    }
  ]
}
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestFormatJSONEmptyAndNotFound(t *testing.T) {
	got := writeFormatJSON(t, "jobid stat", nil, nil)
	if want := "{\n  \"COMMAND\":\"bjobs\",\n  \"JOBS\":0,\n  \"RECORDS\":[]\n}\n"; got != want {
		t.Errorf("no jobs: got %q, want %q", got, want)
	}
	got = writeFormatJSON(t, "jobid stat", []*api.Job{jobRunning()}, []string{"123", "124[2]"})
	want := `{
  "COMMAND":"bjobs",
  "JOBS":3,
  "RECORDS":[
    {
      "JOBID":"1234",
      "STAT":"RUN"
    },
    {
      "JOBID":"123",
      "ERROR":"Job <123> is not found"
    },
    {
      "JOBID":"124[2]",
      "ERROR":"Job <124[2]> is not found"
    }
  ]
}
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// Widths do not cut JSON values; quotes, backslashes and control characters
// are escaped so that the output stays valid JSON.
func TestFormatJSONValid(t *testing.T) {
	j := jobRunning()
	j.Spec.JobName = "a \"quoted\" \\ name\twith\ncontrol\x01"
	got := writeFormatJSON(t, "all:", append(allJobs(), j), []string{"9"})
	var doc struct {
		COMMAND string
		JOBS    int
		RECORDS []map[string]string
	}
	if err := json.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, got)
	}
	if doc.COMMAND != "bjobs" || doc.JOBS != 9 || len(doc.RECORDS) != 9 {
		t.Fatalf("COMMAND %q JOBS %d records %d", doc.COMMAND, doc.JOBS, len(doc.RECORDS))
	}
	if n := doc.RECORDS[7]["JOB_NAME"]; n != j.Spec.JobName {
		t.Errorf("JOB_NAME = %q, want %q", n, j.Spec.JobName)
	}
	if n := doc.RECORDS[1]["COMMAND"]; n != jobParallel().Spec.Command {
		t.Errorf("COMMAND cut to %q", n)
	}
	if strings.Contains(got, `":"-"`) {
		t.Errorf("JSON must print empty values as \"\", not \"-\"")
	}
}

func TestFormatGolden(t *testing.T) {
	jobs := allJobs()
	checkGolden(t, "format_table", writeFormat(t,
		"jobid: stat: user: queue: job_name: exec_host: submit_time: run_time: mem: max_mem: exit_code: pend_reason",
		jobs, false))
	checkGolden(t, "format_delimiter", writeFormat(t,
		"id user stat proj application slots pids exec_host finish_time exit_reason sub_cwd delimiter=';'",
		jobs, false))
	checkGolden(t, "format_json", writeFormatJSON(t,
		"jobid job_name stat user queue from_host exec_host submit_time start_time finish_time run_time cpu_used mem max_mem avg_mem swap memlimit runtimelimit exit_code exit_reason pend_reason effective_resreq sub_cwd exec_cwd output_file",
		jobs, []string{"4242"}))
}

// A field marked record reads nothing a RecordsOnly query leaves out: its
// value is the same for a job without specs, pending reasons and usage.
func TestRecordFields(t *testing.T) {
	jobs := []*api.Job{jobRunning(), jobArrayElement(), jobKilled(), jobPending(), jobParallel(), jobHeld()}
	var bare []*api.Job
	for _, j := range jobs {
		b := proto.Clone(j).(*api.Job)
		b.Spec, b.Effective, b.PendReason, b.Usage = nil, nil, "", nil
		bare = append(bare, b)
	}
	n := 0
	for _, f := range fields() {
		if !f.record {
			continue
		}
		n++
		if got, want := writeFormat(t, f.name, bare, true), writeFormat(t, f.name, jobs, true); got != want {
			t.Errorf("%s is marked record, but reads more: %q without the specs, %q with them", f.name, got, want)
		}
	}
	if n < 5 {
		t.Errorf("only %d record fields", n)
	}
	for spec, want := range map[string]bool{"jobid stat exit_code": true, "id stat:8 exit_code delimiter=','": true, "jobid job_name": false, "stat pend_reason": false} {
		if got := parseFormat(t, spec).RecordsOnly(); got != want {
			t.Errorf("RecordsOnly(%q) = %v, want %v", spec, got, want)
		}
	}
}
