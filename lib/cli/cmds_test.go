package cli

import (
	"bytes"
	"strings"
	"testing"

	"xce/lib/api"
)

// What the commands answer without a controller: -V and -h stop with
// status 0; bad options and operands give LSF's messages and 255.
func TestArgumentsWithoutController(t *testing.T) {
	var errb bytes.Buffer
	old := sys
	defer func() { sys = old }()
	sys.stderr, sys.stdout = &errb, &errb
	for _, tc := range []struct {
		cmd  string
		args []string
		rc   int
		want string
	}{
		{"bjobs", []string{"-V"}, 0, "XCE 0.1"},
		{"bsub", []string{"-V"}, 0, "XCE 0.1"},
		{"bkill", []string{"-h"}, 0, "Usage:"},
		{"bjobs", []string{"-Z"}, 255, "bjobs: illegal option -- Z"},
		{"bsub", []string{"-q"}, 255, "bsub: option requires an argument -- q"},
		{"lsid", []string{"-V"}, 0, "XCE 0.1"},
		{"lsid", []string{"-h"}, 0, "Usage:\n  lsid [-h] [-V]"},
		{"lsid", []string{"-l"}, 255, "lsid: illegal option -- l"},
		{"lsid", []string{"extra"}, 255, "lsid: extra operand extra"},
		{"lshosts", []string{"-V"}, 0, "XCE 0.1"},
		{"lshosts", []string{"-x"}, 255, "lshosts: illegal option -- x"},
		{"lsload", []string{"-h"}, 0, "lsload [-gpu] [-l | -w] [-I index_list] [-n num_hosts] [-R \"res_req\"] [host_name ...]"},
		{"busers", []string{"-Q"}, 255, "busers: illegal option -- Q"},
		{"bacct", []string{"-u"}, 255, "bacct: option requires an argument -- u"},
		{"bacct", []string{"12x"}, 255, "12x: Illegal job ID."},
		{"bjobs", []string{"-sum", "-Z"}, 255, "bjobs: illegal option -- Z"},
		{"bjobs", []string{"-g"}, 255, "bjobs: option requires an argument -- g"},
		{"bkill", []string{"-stat", "busy", "0"}, 255, "busy: -stat takes run, pend or susp"},
		{"bkill", []string{"-b", "-stat", "run"}, 255, "-b and -stat cannot be used together"},
		{"bkill", []string{"-d"}, 255, "Job ID or one of '-m', '-u' '-q' and '-J' must be specified."},
		{"bstop", []string{}, 255, "Job ID or one of '-m', '-u' '-q' and '-J' must be specified."},
		{"bresume", []string{"-stat", "run"}, 255, "bresume: illegal option -- stat"},
		{"bstop", []string{"-d", "1"}, 255, "bstop: illegal option -- d"},
		{"bjobs", []string{"-hms", "-o", "nosuchfield"}, 255, "nosuchfield"},
	} {
		errb.Reset()
		if rc := Main(tc.cmd, tc.args); rc != tc.rc || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%s %v: %d %q, want %d and %q", tc.cmd, tc.args, rc, errb.String(), tc.rc, tc.want)
		}
	}
}

func TestInScope(t *testing.T) {
	all := []api.JobState{api.JobState_PEND, api.JobState_PSUSP, api.JobState_RUN, api.JobState_USUSP,
		api.JobState_SSUSP, api.JobState_DONE, api.JobState_EXIT, api.JobState_UNKWN}
	for scope, want := range map[api.QueryRequest_Scope]string{
		api.QueryRequest_UNFINISHED: "PEND PSUSP RUN USUSP SSUSP UNKWN",
		api.QueryRequest_ALL:        "PEND PSUSP RUN USUSP SSUSP DONE EXIT UNKWN",
		api.QueryRequest_FINISHED:   "DONE EXIT",
		api.QueryRequest_PENDING:    "PEND PSUSP",
		api.QueryRequest_RUNNING:    "RUN",
		api.QueryRequest_SUSPENDED:  "PSUSP USUSP SSUSP",
	} {
		var got []string
		for _, s := range all {
			if inScope(scope, s) {
				got = append(got, s.String())
			}
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%v: %v, want %s", scope, got, want)
		}
	}
}
