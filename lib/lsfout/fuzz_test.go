package lsfout

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"xce/lib/api"
)

// FuzzParseFormat: whatever -o (or LSB_BJOBS_FORMAT) says, the parser
// answers with a format or an error, and a format prints a bounded line:
// "jobid:99999999999" once made every row that many bytes.
func FuzzParseFormat(f *testing.F) {
	for _, s := range []string{
		"jobid stat user queue", "jobid: stat:-5 job_name:10", "all", "mem:10:MB max_mem:-8:G delimiter='^'",
		"jobid:99999999999", "jobid:4096", "name:: delimiter=',' x", "JOBID:-:KB", "delimiter='", "",
	} {
		f.Add(s)
	}
	jobs := []*api.Job{jobRunning(), jobPending(), jobParallel(), jobArrayElement(), jobKilled()}
	f.Fuzz(func(t *testing.T, spec string) {
		fm, err := ParseFormat(spec)
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := fm.Write(&b, jobs, false); err != nil {
			t.Fatal(err)
		}
		// Every column is at most MaxWidth wide, or as wide as its value.
		cols := len(strings.Fields(spec)) * len(fields())
		if limit := cols*(MaxWidth+1) + 1<<16; b.Len() > limit*(len(jobs)+1) {
			t.Fatalf("%q printed %d bytes", spec, b.Len())
		}
		if err := fm.WriteJSON(&b, jobs, nil); err != nil {
			t.Fatal(err)
		}
	})
}

// TestFormatWidthBounded: an -o width beyond MaxWidth is an error (it ran
// bjobs out of memory).
func TestFormatWidthBounded(t *testing.T) {
	for _, spec := range []string{"jobid:99999999999", "jobid:4097", "stat:-1000000:KB", "job_name:2147483648"} {
		if _, err := ParseFormat(spec); err == nil || !strings.Contains(err.Error(), "at most 4096") {
			t.Errorf("%q: %v, want the width refused", spec, err)
		}
	}
	if _, err := ParseFormat("jobid:4096 stat:-4096"); err != nil {
		t.Errorf("width 4096: %v", err)
	}
}

// TestFormatInvalidUTF8: a byte that is not UTF-8 before delimiter= made
// the parser slice past the end (found by FuzzParseFormat).
func TestFormatInvalidUTF8(t *testing.T) {
	for _, spec := range []string{"\x9fdelimiter=", "\xff\xfeDELIMITER=','", "jobid \x80 delimiter='x'"} {
		_, _ = ParseFormat(spec) // an error or a format; no panic
	}
	f, err := ParseFormat("jobid\xff stat delimiter=','")
	if err == nil && f == nil {
		t.Fatal("no format and no error")
	}
}

// FuzzJSONString: what -json writes of any string is a JSON string that
// reads back as the string (invalid UTF-8 as U+FFFD, byte by byte).
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", `a"b\c/d`, "tab\there\nnew\r", "\x00\x1f\x7f", "é€😀", "\xff\xfe bad", "/usr/bin/sleep 10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b bytes.Buffer
		writeJSONString(&b, s)
		var back string
		if err := json.Unmarshal(b.Bytes(), &back); err != nil {
			t.Fatalf("%q wrote %s: %v", s, b.Bytes(), err)
		}
		if want := string([]rune(s)); back != want {
			t.Fatalf("%q wrote %s, which reads %q", s, b.Bytes(), back)
		}
		if strings.Count(b.String(), "/") != strings.Count(b.String(), `\/`) {
			t.Fatalf("%q: a / not escaped as LSF does: %s", s, b.Bytes())
		}
	})
}
