package cli

import (
	"bytes"
	"strings"
	"testing"
)

// bapp's and bqueues -l's options, answered without a controller.
func TestBappArguments(t *testing.T) {
	var errb bytes.Buffer
	old := sys
	defer func() { sys = old }()
	sys.stderr, sys.stdout = &errb, &errb
	for _, tc := range []struct {
		args []string
		rc   int
		want string
	}{
		{[]string{"-V"}, 0, "XCE 0.1"},
		{[]string{"-h"}, 0, "bapp [-l | -w] [-noheader] [application_profile ...]"},
		{[]string{"-x"}, 255, "bapp: illegal option -- x"},
		{[]string{"-l", "-w"}, 255, "bapp: -l and -w cannot be used together"},
	} {
		errb.Reset()
		if rc := Main("bapp", tc.args); rc != tc.rc || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("bapp %v: %d %q, want %d and %q", tc.args, rc, errb.String(), tc.rc, tc.want)
		}
	}
	errb.Reset()
	if rc := Main("bqueues", []string{"-h"}); rc != 0 || !strings.Contains(errb.String(), "bqueues [-w | -l | -r | -o") {
		t.Errorf("bqueues -h: %d %q", rc, errb.String())
	}
}
