package trace

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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

func TestWriteSWFRoundTrip(t *testing.T) {
	jobs := []Job{
		{ID: 1, Submit: 0, Run: sec(100), Slots: 8, Limit: sec(200), MemMB: 1.5, User: "u3", Group: "g2", Queue: "q1"},
		{ID: 2, Submit: sec(5), Run: 1500 * time.Millisecond, Slots: 1, User: "alice", Group: "", Queue: ""},
		{ID: 3, Submit: sec(5), Run: sec(0), Slots: 4, User: "bob", Group: "phys", Queue: "night", DependsOn: 1, Think: sec(30)},
		{ID: 4, Submit: sec(7), Run: sec(1), Slots: 2, User: "unknown", Group: "g9", Queue: "q7", DependsOn: 3},
	}
	hdr := map[string]string{"MaxProcs": "64", "Note": "a\nb", "Zeta": "z", "Version": "2.2"}
	var buf strings.Builder
	if err := WriteSWF(&buf, hdr, jobs); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "; Version: 2.2\n; MaxProcs: 64\n; Note: a\n; Note: b\n; Zeta: z\n1 0 -1 100 8 -1 -1 8 200 1536 1 3 2 -1 1 -1 -1 -1\n") {
		t.Errorf("output:\n%s", buf.String())
	}
	tr, err := ReadSWF(strings.NewReader(buf.String()), "rt")
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(jobs)
	// Names that are not SWF's own come back as the numbers they got.
	want[1].User, want[2].User = "u4", "u5"
	want[2].Group, want[2].Queue = "g10", "q8"
	for i := range tr.Jobs {
		tr.Jobs[i].Line = 0
	}
	if !reflect.DeepEqual(tr.Jobs, want) || !reflect.DeepEqual(tr.Header, hdr) {
		t.Errorf("round trip:\n got %+v %v\nwant %+v", tr.Jobs, tr.Header, want)
	}
}

// FuzzReadSWF: no input makes ReadSWF panic; what it reads is sane, and
// writing it and reading that again gives the same jobs.
func FuzzReadSWF(f *testing.F) {
	f.Add([]byte(swfSample))
	f.Add([]byte("1 0 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n"))
	f.Add([]byte("; MaxProcs: 12\n1 0.5 0 1e3 1 -1 -1 1 -1 1.5 1 1 1 -1 1 2 -1 7.25\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ReadSWF(bytes.NewReader(data), "fuzz")
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Count(data, []byte{'\n'}) + 1
		for _, j := range tr.Jobs {
			if j.Slots <= 0 || j.Run < 0 || j.Submit < 0 || j.Line < 1 || j.Line > lines {
				t.Fatalf("bad job %+v", j)
			}
		}
		for _, p := range append(tr.Malformed, tr.Skipped...) {
			if p.Line < 1 || p.Line > lines || p.Why == "" {
				t.Fatalf("bad problem %v", p)
			}
		}
		if !slices.IsSortedFunc(tr.Jobs, cmpSubmit) {
			t.Fatal("not in submission order")
		}
		var buf bytes.Buffer
		if err := WriteSWF(&buf, nil, tr.Jobs); err != nil {
			t.Fatal(err)
		}
		back, err := ReadSWF(&buf, "again")
		if err != nil {
			t.Fatal(err)
		}
		if len(back.Jobs) != len(tr.Jobs) || len(back.Malformed)+len(back.Skipped) != 0 {
			t.Fatalf("again: %d jobs of %d, problems %v %v\n%s", len(back.Jobs), len(tr.Jobs), back.Malformed, back.Skipped, buf.String())
		}
		for i := range back.Jobs {
			a, b := tr.Jobs[i], back.Jobs[i]
			if !near(a.Submit, b.Submit) || !near(a.Run, b.Run) || !near(a.Limit, b.Limit) || !near(a.Think, b.Think) {
				t.Fatalf("times differ: %+v %+v", a, b)
			}
			a.Submit, a.Run, a.Limit, a.Think, a.Line = b.Submit, b.Run, b.Limit, b.Think, b.Line
			if a != b {
				t.Fatalf("job %d differs:\n%+v\n%+v", i, a, b)
			}
		}
	})
}

// near allows the rounding of a time through its decimal seconds.
func near(a, b time.Duration) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= time.Microsecond || float64(d) <= 1e-12*math.Abs(float64(a))
}
