package cli

import (
	"bytes"
	"strings"
	"testing"
)

// blaunch's refusals before it reaches a worker: outside a job (OpenLava's
// message), -u with -z, no command, no task socket; and which first word
// of the rsh form is a host.
func TestBlaunchArguments(t *testing.T) {
	var errb bytes.Buffer
	old := sys
	defer func() { sys = old }()
	vars := map[string]string{}
	sys.stderr, sys.stdout = &errb, &errb
	sys.getenv = func(k string) string { return vars[k] }
	for _, tc := range []struct {
		jobid string
		args  []string
		rc    int
		want  string
	}{
		{"", []string{"hostname"}, 255, "blaunch: cannot run without jobid\n"},
		{"7", []string{"-V"}, 0, "XCE 0.1"},
		{"7", []string{"-u", "f", "-z", "a b", "true"}, 255, "blaunch: -u and -z are mutually exclusive\n"},
		{"7", []string{"-z", "a b"}, 255, "blaunch: no command given\n"},
		{"7", []string{"-Q", "true"}, 255, "blaunch: illegal option -- Q"},
		{"7", []string{"hostA", "true"}, 255, "blaunch: XCE_TASK_SOCKET is not set"},
	} {
		errb.Reset()
		vars["LSB_JOBID"] = tc.jobid
		if rc := blaunch(tc.args); rc != tc.rc || !strings.HasPrefix(errb.String(), tc.want) {
			t.Errorf("blaunch %q (LSB_JOBID=%q): %d %q, want %d %q", tc.args, tc.jobid, rc, errb.String(), tc.rc, tc.want)
		}
	}
	vars["LSB_HOSTS"] = "hA hA ls"
	for w, host := range map[string]bool{"hA": true, "ls": true, "sh": false, "./run": false, "nosuchhost": true} {
		if got := blaunchHostWord(w); got != host {
			t.Errorf("blaunchHostWord(%q) = %v, want %v", w, got, host)
		}
	}
}
