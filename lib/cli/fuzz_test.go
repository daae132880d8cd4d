package cli

import (
	"strings"
	"testing"

	"xce/lib/api"
)

// FuzzDirectives: whatever a job script holds, its #BSUB lines give
// option words or an error, never a panic.
func FuzzDirectives(f *testing.F) {
	for _, s := range []string{
		"#!/bin/sh\n#BSUB -J x -n 2\n#BSUB -o 'out %J' # comment\necho hi\n",
		"#BSUB -R \"select[mem>1]\" \\\n  -W 10\n", "# BSUB -q normal\n#BSUB\n", "#BSUB -J \"unterminated\n",
		"#BSUB -w 'done(1)' -u a@b\r\n#BSUB -E \"echo '#'\"\n", "#BSUB \\", "#BSUB `x` $(y) ${z}\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		words, err := directives(script)
		if err != nil {
			return
		}
		if len(words) > 0 && !strings.Contains(script, "BSUB") {
			t.Fatalf("%q: words %q without a #BSUB line", script, words)
		}
	})
}

// FuzzParseJobIDs: whatever job id arguments a command gets, it reads
// references or answers with LSF's error, never a panic, and never an id
// or index out of range.
func FuzzParseJobIDs(f *testing.F) {
	for _, s := range []string{"123", "123[4]", "1[1-3,7] 9", "5[1-9:2]", "0", "12x", "1[2", "5[3-1]", "-1", "9223372036854775807[2147483647]", "1[0]", "1[1-2147483648]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, args string) {
		refs, err := parseJobIDs(strings.Fields(args))
		if err != nil {
			return
		}
		for _, r := range refs {
			if r.JobId < 0 || r.ArrayIndex < -1 {
				t.Fatalf("%q: reference %v", args, r)
			}
		}
	})
}

// FuzzPackJob: a job pack's line is a job with a command, or an error;
// the options a pack refuses never come through.
func FuzzPackJob(f *testing.F) {
	for _, s := range []string{
		"-H true", `-J "a[1-3]" -q normal echo "a b"`, "-I true", "-K -H sleep 1", "-pack x",
		"-n 2 -R 'span[hosts=1]'", "-o", `echo "unterminated`, "-Is", "-H -- -H", "-x -m hostA ./prog $HOME",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		spec, err := packJob(line)
		if err != nil {
			return
		}
		if strings.TrimSpace(spec.Command) == "" {
			t.Fatalf("%q: a job without a command", line)
		}
		if spec.Interactive != api.Interactive_BATCH {
			t.Fatalf("%q: an interactive job in a pack", line)
		}
	})
}
