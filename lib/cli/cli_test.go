package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestLSFArgs(t *testing.T) {
	fs := pflag.NewFlagSet("bsub", pflag.ContinueOnError)
	var o bsubOpts
	bsubFlags(fs, &o)
	fs.BoolP("help", "h", false, "") // as newCommand defines it
	for _, tc := range []struct {
		in   string
		stop bool
		want string // or the error
	}{
		{"-app prof -n 2 mpirun -np 2 ./a.out", true, "--app=prof --n=2 -- mpirun -np 2 ./a.out"},
		{"-J a[1-3] -K -oo out sleep 1", true, "--J=a[1-3] --K --oo=out -- sleep 1"},
		{"-E -x true", true, "--E=-x -- true"},
		{"-q", true, "option requires an argument -- q"},
		{"-Z 1 true", true, "illegal option -- Z"},
		{"-q normal -- -weird", true, "--q=normal -- -weird"},
		{"1 -q normal 2", false, "1 --q=normal 2"},
		// getopt's rules: bundles and attached values.
		{"-n2 -qnormal -Kx sleep 1", true, "--n=2 --q=normal --K --x -- sleep 1"},
		{"-Kq normal true", true, "--K --q=normal -- true"},
		{"-KJjob true", true, "--K --J=job -- true"},
		{"-Hn", true, "option requires an argument -- n"},
		// A multi-letter LSF word wins over a bundle, and takes no
		// attached value: -Jdx is -J dx.
		{"-Is -Ip -Jd d -Jdx true", true, "--Is --Ip --Jd=d --J=dx -- true"},
		{"-Kz true", true, "illegal option -- Kz"},
		{"--foo true", true, "illegal option -- -foo"},
		{"--q normal true", true, "illegal option -- -q"},
		{"--help", true, "--help"},
		{"-h", true, "--help"},
	} {
		argv, err := lsfArgs(fs, strings.Fields(tc.in), tc.stop)
		got := strings.Join(argv, " ")
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%q: %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestParseJobIDs(t *testing.T) {
	refs, err := parseJobIDs([]string{"12", "13[2]", "14[1-3,7]", "15[1-7:3,4]", "0"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range refs {
		got = append(got, fmt.Sprintf("%d/%d", r.JobId, r.ArrayIndex))
	}
	if s := strings.Join(got, " "); s != "12/-1 13/2 14/1 14/2 14/3 14/7 15/1 15/4 15/7 0/-1" {
		t.Errorf("%s", s)
	}
	// OpenLava's texts (getJobIdIndexList, parseJobArrayIndex).
	for bad, want := range map[string]string{
		"x":              "x: Illegal job ID.",
		"12x":            "12x: Illegal job ID.",
		"[3]":            "[3]: Illegal job ID.",
		"+3":             "+3: Illegal job ID.",
		"-1":             "-1: Illegal job ID.",
		"12[":            "12[: Bad job array index list.",
		"12[]":           "12[]: Bad job array index list.",
		"12[a]":          "12[a]: Bad job array index list.",
		"12[1-]":         "12[1-]: Bad job array index list.",
		"12[1]x":         "12[1]x: Bad job array index list.",
		"12[0]":          "0: Job Array index out of valid range.",
		"12[3-1]":        "3-1: Job Array index invalid range.",
		"12[1-5:0]":      "0: Job Array index step out of valid range.",
		"12[9999999999]": "9999999999: Job Array index out of valid range.",
		"0[1]":           "0[1]: Job ID out of valid range.",
		"12[1-2000000]":  "12[1-2000000]: Job array index too large.",
	} {
		if _, err := parseJobIDs([]string{bad}); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %q", bad, err, want)
		}
	}
}

func TestLimits(t *testing.T) {
	for in, want := range map[string]int64{"10": 600, "3:30": 12600, "90": 5400, "1:00/hostA": 3600} {
		if got, err := parseMinutes(in); err != nil || got != want {
			t.Errorf("-W %s: %d %v, want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "abc", "1:75", "-5", "0", "1:x"} {
		if _, err := parseMinutes(bad); err == nil {
			t.Errorf("-W %q accepted", bad)
		}
	}
	for in, want := range map[string]int64{"4000": 4000, "4MB": 4096, "2G": 2 << 20, "1.5GB": 3 << 19, "10k": 10} {
		if got, _, err := parseMemLimit(in); err != nil || got != want {
			t.Errorf("-M %s: %d %v, want %d", in, got, err, want)
		}
	}
	if _, hard, _ := parseMemLimit("8G!"); !hard {
		t.Error("-M 8G! is not hard")
	}
	for _, bad := range []string{"lots", "-3", "0", "3X"} {
		if _, _, err := parseMemLimit(bad); err == nil {
			t.Errorf("-M %q accepted", bad)
		}
	}
}

func TestJobEnv(t *testing.T) {
	environ := []string{"A=1", "B=2", "C=3"}
	for _, tc := range []struct{ spec, want string }{
		{"", "A=1 B=2 C=3"},
		{"all", "A=1 B=2 C=3"},
		{"none", ""},
		{"all, ~B, D=4", "A=1 C=3 D=4"},
		{"A, C=9", "A=1 C=9"},
		{"X='a, b'", "X=a, b"},
	} {
		got, err := jobEnv(tc.spec, environ)
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("-env %q: %q %v, want %q", tc.spec, got, err, tc.want)
		}
	}
	if _, err := jobEnv("X='a", environ); err == nil {
		t.Error("an unbalanced quote was accepted")
	}
}

func TestDirectives(t *testing.T) {
	script := "#!/bin/sh\n#BSUB -J test # a comment\n  # BSUB -n 2\n#BSUB -R \"select[mem>1]\" \\\n  -o out.%J\necho hi\n#BSUB -P late\n#bsub -q ignored\n"
	got, err := directives(script)
	if err != nil {
		t.Fatal(err)
	}
	want := `-J test -n 2 -R select[mem>1] -o out.%J -P late`
	if strings.Join(got, " ") != want {
		t.Errorf("%q, want %q", strings.Join(got, " "), want)
	}
	if hasCommand("#!/bin/sh\n#BSUB -q x\n\n") || !hasCommand("#BSUB -q x\ntrue\n") {
		t.Error("hasCommand")
	}
}

func TestParseLSFTime(t *testing.T) {
	now := time.Date(2026, 11, 30, 14, 30, 0, 0, time.Local)
	at := func(y, m, d, h, min int) time.Time { return time.Date(y, time.Month(m), d, h, min, 0, 0, time.Local) }
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"16:00", at(2026, 11, 30, 16, 0)},
		{"9:05", at(2026, 12, 1, 9, 5)},          // past today: tomorrow
		{"31:10:00", at(2026, 12, 31, 10, 0)},    // no Nov 31: the next month with one
		{"30:12:00", at(2026, 12, 30, 12, 0)},    // past this month
		{"1:15:08:00", at(2027, 1, 15, 8, 0)},    // January: next year
		{"12:24:18:00", at(2026, 12, 24, 18, 0)}, // later this year
		{"2025:1:2:3:4", at(2025, 1, 2, 3, 4)},   // an exact past time (fine for -b)
		{"2028:2:29:0:0", at(2028, 2, 29, 0, 0)}, // leap day
	} {
		got, err := parseLSFTime(tc.in, now)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("%s: %v %v, want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"16", "25:00", "12:60", "a:b", "2027:2:30:0:0", "1:2:3:4:5:6", "2026:13:1:0:0", "0:1:00"} {
		if _, err := parseLSFTime(bad, now); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
