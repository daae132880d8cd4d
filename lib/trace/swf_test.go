package trace

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const swfSample = `; Version: 2.2
; Computer: a test machine
; MaxJobs: 4
; MaxRecords: 5
; UnixStartTime: 1000000000
; MaxProcs: 128
; MaxNodes: 64
; Note: first
; Note: second
;
; a comment in prose: not a field
    1     0    5   100    4   -1  -1    8   200  1024  1  3  2 -1  1 -1 -1 -1
    2    10    0    50    2   -1  -1   -1    -1    -1  1  4 -1 -1  0 -1  1 30
    3     5    0    -1    1   -1  -1    1    10    -1  5  3  2 -1  2 -1 -1 -1
    4     5    0    20    1   -1  -1    1    10  2048.5  1  -1  2 -1  -1 -1 -1 -1
`

func sec(n float64) time.Duration { return time.Duration(n * float64(time.Second)) }

func TestReadSWF(t *testing.T) {
	tr, err := ReadSWF(strings.NewReader(swfSample), "s.swf")
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{
		{ID: 1, Submit: 0, Run: sec(100), Slots: 8, Limit: sec(200), MemMB: 1, User: "u3", Group: "g2", Queue: "q1", Line: 12},
		{ID: 4, Submit: sec(5), Run: sec(20), Slots: 1, Limit: sec(10), MemMB: 2048.5 / 1024, User: "unknown", Group: "g2", Line: 15},
		{ID: 2, Submit: sec(10), Run: sec(50), Slots: 2, User: "u4", DependsOn: 1, Think: sec(30), Line: 13},
	}
	if !reflect.DeepEqual(tr.Jobs, want) {
		t.Errorf("jobs:\n got %+v\nwant %+v", tr.Jobs, want)
	}
	if len(tr.Malformed) != 0 {
		t.Errorf("malformed: %v", tr.Malformed)
	}
	if len(tr.Skipped) != 1 || tr.Skipped[0].String() != "s.swf:14: negative run time" {
		t.Errorf("skipped: %v", tr.Skipped)
	}
	if tr.MaxProcs() != 128 || tr.Header["Note"] != "first\nsecond" || tr.Header["Computer"] != "a test machine" {
		t.Errorf("header: %v", tr.Header)
	}
	if v, ok := tr.HeaderInt("UnixStartTime"); !ok || v != 1000000000 {
		t.Errorf("UnixStartTime %d %v", v, ok)
	}
	// Interned: one string per user number.
	if tr.Jobs[0].Group != tr.Jobs[1].Group {
		t.Error("groups differ")
	}
}

func TestReadSWFBadLines(t *testing.T) {
	cases := []struct {
		line string
		why  string // "" when the line is read
		skip bool
	}{
		{"1 0 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1", "", false},
		{"1 0 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1", "17 fields, SWF has 18", false},
		{"1 0 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1 7", "more than 18 fields", false},
		{"1 0 0 x 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1", `field 4: "x" is not a number`, false},
		{"1 0 0 inf 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1", `field 4: "inf" is not a number`, false},
		{"1 0 0 1e999 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1", `field 4: "1e999" is not a number`, false},
		{"1 0 0 10 -1 -1 -1 -1 -1 -1 1 1 1 -1 1 -1 -1 -1", "no processor count", true},
		{"1 -3 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1", "negative submit time", true},
		{"1 0 0 10 1e12 -1 -1 -1 -1 -1 1 1 1 -1 1 -1 -1 -1", "number out of range", false},
		{"1\t0\t0\t10\t1\t-1\t-1\t1\t-1\t-1\t1\t1\t1\t-1\t1\t-1\t-1\t-1\r", "", false},
	}
	for _, c := range cases {
		tr, err := ReadSWF(strings.NewReader("\n"+c.line+"\n"), "f")
		if err != nil {
			t.Fatal(err)
		}
		var got []Problem
		if c.skip {
			got = tr.Skipped
		} else {
			got = tr.Malformed
		}
		switch {
		case c.why == "" && (len(tr.Jobs) != 1 || len(tr.Malformed)+len(tr.Skipped) != 0):
			t.Errorf("%q: jobs %v problems %v %v", c.line, tr.Jobs, tr.Malformed, tr.Skipped)
		case c.why != "" && (len(got) != 1 || got[0] != Problem{"f", 2, c.why} || len(tr.Jobs) != 0):
			t.Errorf("%q: got %v, want f:2: %s", c.line, got, c.why)
		}
	}
}

func TestReadSWFLongLine(t *testing.T) {
	in := "1 0 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n" + strings.Repeat("9", maxLine+10) + "\n2 0 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1"
	tr, err := ReadSWF(strings.NewReader(in), "f")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Jobs) != 2 || tr.Jobs[1].Line != 3 || len(tr.Malformed) != 1 || tr.Malformed[0].Line != 2 {
		t.Errorf("jobs %v malformed %v", tr.Jobs, tr.Malformed)
	}
}

func TestReadDetect(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	swf := write("a", swfSample)
	bare := write("b", "\n 1 0 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n")
	other := write("c", "hello\n")
	for p, want := range map[string]Format{swf: SWF, bare: SWF, dir: Acct} {
		if f, err := Detect(p); err != nil || f != want {
			t.Errorf("Detect(%s) = %q, %v; want %q", p, f, err, want)
		}
	}
	if _, err := Detect(other); err == nil {
		t.Error("Detect of prose: no error")
	}
	tr, err := Read(swf, "")
	if err != nil || tr.Format != SWF || len(tr.Jobs) != 3 {
		t.Fatalf("Read: %v %v", tr, err)
	}
	if _, err := Read(swf, "xml"); err == nil {
		t.Error("unknown format: no error")
	}
	if _, err := Read(filepath.Join(dir, "none"), SWF); err == nil {
		t.Error("missing file: no error")
	}
}
