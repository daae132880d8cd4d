package trace

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"
)

// lsbRecord builds a JOB_FINISH record as LSF 10.1 writes it; fields
// given in over replace the defaults by name, and cut > 0 ends the record
// after that many fields (an older release's shorter one).
func lsbRecord(over map[string]string, cut int) string {
	f := []struct{ name, v string }{
		{"type", `"JOB_FINISH"`}, {"version", `"10.1"`}, {"eventTime", "1700000100"}, {"jobId", "101"},
		{"userId", "1000"}, {"options", "33554434"}, {"numProcessors", "4"}, {"submitTime", "1700000000"},
		{"beginTime", "0"}, {"termTime", "0"}, {"startTime", "1700000040"}, {"userName", `"alice"`},
		{"queue", `"normal"`}, {"resReq", `"select[type==any] rusage[mem=2048]"`}, {"dependCond", `"done(100)"`},
		{"preExecCmd", `""`}, {"fromHost", `"hostA"`}, {"cwd", `"/home/alice"`}, {"inFile", `""`},
		{"outFile", `""`}, {"errFile", `""`}, {"jobFile", `"1700000000.101"`},
		{"numAskedHosts", `1 "hostB"`}, {"numExHosts", `4 "hostB" "hostB" "hostC" "hostC"`},
		{"jStatus", "64"}, {"hostFactor", "60.0"}, {"jobName", `"my job"`}, {"command", `"echo ""hi there"" > x"`},
		{"rusage", strings.TrimSpace(strings.Repeat("-1 ", 19))}, {"mailUser", `""`}, {"projectName", `"default"`},
		{"exitStatus", "0"}, {"maxNumProcessors", "4"}, {"loginShell", `""`}, {"timeEvent", `""`}, {"idx", "0"},
		{"maxRMem ... jobDescription", `1024 2048 "" "" "" "" 0 "" 0 "" -1 "" "" "" "" -1 "" "" 0 "" 0 "" "a description"`},
		{"submitEXT", `2 1005 "grp" 1006 "x"`}, {"hostRusage", `1 "hostB" 100 200 1 2`}, {"options3", "0"},
		{"runLimit", "3600"}, {"avgMem", "500"}, {"effectiveResReq", `"select[type == any] order[r15s:pg]"`},
	}
	var parts []string
	for i, x := range f {
		if cut > 0 && i == cut {
			break
		}
		if v, ok := over[x.name]; ok {
			x.v = v
		}
		parts = append(parts, x.v)
	}
	return strings.Join(parts, " ")
}

func TestReadLSBAcct(t *testing.T) {
	in := strings.Join([]string{
		lsbRecord(nil, 0),
		`"EVENT_ADRSV_FINISH" "10.1" 1700000200 "user1#0" 0 0`,
		"# a comment",
		lsbRecord(map[string]string{"jobId": "102", "idx": "3", "submitTime": "1699999990", "startTime": "1700000000",
			"eventTime": "1700000005", "runLimit": "-1", "resReq": `""`, "dependCond": `"done(100) && exit(99)"`,
			"userName": `"bob"`, "numProcessors": "1"}, 0),
		// LSF 7: the record ends after maxRMem and friends.
		lsbRecord(map[string]string{"jobId": "103", "version": `"7.06"`, "dependCond": `"ended(7)"`}, 35),
		lsbRecord(map[string]string{"jobId": "104", "startTime": "0"}, 0),
		lsbRecord(map[string]string{"jobId": "105", "eventTime": "1700000000"}, 0),
		lsbRecord(map[string]string{"jobId": "106", "numProcessors": "four"}, 0),
		lsbRecord(map[string]string{"jobId": "107", "numExHosts": "99999 x"}, 0),
		`"JOB_FINISH" "10.1" 1 "unclosed`,
		`JOB_FINISH 10.1`,
		lsbRecord(map[string]string{"jobId": "108", "numProcessors": "0"}, 0),
		"hello world",
	}, "\n")
	tr, err := ReadLSBAcct(strings.NewReader(in), "lsb.acct")
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{
		{ID: 102, Index: 3, Submit: 0, Run: 5 * time.Second, Slots: 1, User: "bob", Queue: "normal", Line: 4},
		{ID: 101, Submit: 10 * time.Second, Run: 60 * time.Second, Slots: 4, Limit: time.Hour, MemMB: 2048,
			User: "alice", Queue: "normal", ResReq: "select[type==any] rusage[mem=2048]", DependsOn: 100, Line: 1},
		{ID: 103, Submit: 10 * time.Second, Run: 60 * time.Second, Slots: 4, MemMB: 2048,
			User: "alice", Queue: "normal", ResReq: "select[type==any] rusage[mem=2048]", DependsOn: 7, Line: 5},
	}
	if !reflect.DeepEqual(tr.Jobs, want) {
		t.Errorf("jobs:\n got %+v\nwant %+v", tr.Jobs, want)
	}
	if tr.Header["UnixStartTime"] != "1699999990" || tr.Format != LSBAcct {
		t.Errorf("header %v format %v", tr.Header, tr.Format)
	}
	var skipped, malformed []string
	for _, p := range tr.Skipped {
		skipped = append(skipped, p.String())
	}
	for _, p := range tr.Malformed {
		malformed = append(malformed, p.String())
	}
	wantSkipped := []string{"lsb.acct:6: never started", "lsb.acct:7: ended before it started", "lsb.acct:12: no processor count"}
	wantMalformed := []string{
		`lsb.acct:8: field 7: numProcessors: "four" is not a number`,
		"lsb.acct:9: field 25: numExHosts: 99999 is not a list length",
		"lsb.acct:10: field 4: a string without its closing quote",
		"lsb.acct:11: field 3: the event time is missing",
		"lsb.acct:13: not an lsb.acct record",
	}
	if !reflect.DeepEqual(skipped, wantSkipped) || !reflect.DeepEqual(malformed, wantMalformed) {
		t.Errorf("skipped %q\nmalformed %q", skipped, malformed)
	}
}

func TestDetectLSBAcct(t *testing.T) {
	if f := detect([]byte("\n# x\n" + lsbRecord(nil, 0))); f != LSBAcct {
		t.Errorf("detect: %q", f)
	}
}

func TestDependsOn(t *testing.T) {
	for in, want := range map[string]int64{
		"done(12)": 12, " ended( 7 ) ": 7, "12": 12, "exit(3)": 3, "done(12) && done(13)": 0,
		"done(name)": 0, "done(12[3])": 0, "": 0, "numdone(12, *)": 0, "-4": 0, "exit(3,1)": 0,
	} {
		if got := dependsOn(in); got != want {
			t.Errorf("dependsOn(%q) = %d, want %d", in, got, want)
		}
	}
}

// FuzzReadLSBAcct: no input makes ReadLSBAcct panic, and what it reads
// is sane.
func FuzzReadLSBAcct(f *testing.F) {
	f.Add([]byte(lsbRecord(nil, 0)))
	f.Add([]byte(lsbRecord(map[string]string{"version": `"7.06"`}, 35)))
	f.Add([]byte(`"JOB_FINISH" "10.1" 1 2 3 4 5 6 7 8 9 "a""b" "c"` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ReadLSBAcct(bytes.NewReader(data), "fuzz")
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Count(data, []byte{'\n'}) + 1
		for _, j := range tr.Jobs {
			if j.Slots <= 0 || j.Run < 0 || j.Submit < 0 || j.Line < 1 || j.Line > lines || j.ID < 1 || j.Index < 0 || j.Limit < 0 {
				t.Fatalf("bad job %+v", j)
			}
		}
		for _, p := range append(tr.Malformed, tr.Skipped...) {
			if p.Line < 1 || p.Line > lines || p.Why == "" {
				t.Fatalf("bad problem %v", p)
			}
		}
		if n := len(tr.Jobs) + len(tr.Malformed) + len(tr.Skipped); n > lines {
			t.Fatalf("%d records from %d lines", n, lines)
		}
	})
}
