package controller

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"xce/lib/api"
)

// TestConfigOwnedFieldsNotFromWire: a client that fills the fields the
// configuration owns (the exec chain, the job starter, the environment
// overlay) or the submission host does not get them: they were taken from
// the wire and the worker ran them as the job's root-side setup.
func TestConfigOwnedFieldsNotFromWire(t *testing.T) {
	c, fx := newTestController(t, 2, 0)
	forged := &api.JobSpec{
		Command:       "true",
		PreExecChain:  []string{"touch /tmp/pwned"},
		PostExecChain: []string{"touch /tmp/pwned2"},
		JobStarter:    "/tmp/evil %USRCMD",
		EnvOverlay:    []string{"LD_PRELOAD=/tmp/evil.so"},
		Origin:        map[string]string{"job_starter": "profile forged"},
		PendLimits:    []*api.PendLimit{{Kind: api.PendLimit_USER_SLOTS, Max: 1 << 40}},
		SubmitHost:    "forged-host",
		Uid:           0, User: "root", Home: "/root",
		EnvRef: []byte("someone-else's-env"),
	}
	reply, err := c.Submit(alice, forged)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the job to be launched", func() bool {
		fx.mu.Lock()
		defer fx.mu.Unlock()
		return len(fx.launched) == 1
	})
	sub, _, err := c.store.Spec(reply.JobId)
	if err != nil {
		t.Fatal(err)
	}
	fx.mu.Lock()
	j := fx.launched[0]
	fx.mu.Unlock()
	for name, spec := range map[string]*api.JobSpec{"stored submission": sub, "launched submission": j.Spec, "launched effective spec": j.Effective} {
		if len(spec.PreExecChain)+len(spec.PostExecChain)+len(spec.EnvOverlay)+len(spec.PendLimits) > 0 || spec.JobStarter != "" {
			t.Errorf("%s keeps the client's config-owned fields: pre %q post %q starter %q overlay %q limits %v",
				name, spec.PreExecChain, spec.PostExecChain, spec.JobStarter, spec.EnvOverlay, spec.PendLimits)
		}
		if spec.Origin["job_starter"] != "" {
			t.Errorf("%s keeps the client's origin %v", name, spec.Origin)
		}
		if spec.Uid != alice.UID {
			t.Errorf("%s: uid %d, want the caller's %d", name, spec.Uid, alice.UID)
		}
	}
	if sub.SubmitHost != "hostA" {
		t.Errorf("submission host %q, want the controller's host for a local caller (hostA)", sub.SubmitHost)
	}
}

// TestSubmitLimits: what a user sends is bounded; a value out of range,
// as a client's overflow makes it, is an error, never "no limit".
func TestSubmitLimits(t *testing.T) {
	c, _ := newTestController(t, 2, -1)
	big := func(n int) string { return strings.Repeat("x", n) }
	manyEnv := make([]string, maxEnvCount+1)
	for i := range manyEnv {
		manyEnv[i] = fmt.Sprintf("V%d=1", i)
	}
	for _, tc := range []struct {
		name string
		spec *api.JobSpec
		want string
	}{
		{"job name length", &api.JobSpec{JobName: big(maxNameLen + 1)}, "job name is too long"},
		{"job name newline", &api.JobSpec{JobName: "a\nb"}, "job name contains a control character"},
		{"job name brackets", &api.JobSpec{JobName: "a[1-100000000]"}, "Bad job name"},
		{"mail header injection", &api.JobSpec{MailUser: "me@example.org\nBcc: all@example.org"}, "mail address contains a control character"},
		{"mail CR", &api.JobSpec{MailUser: "me\r"}, "control character"},
		{"mail two addresses", &api.JobSpec{MailUser: "a@x, b@y"}, "Bad mail address"},
		{"mail sendmail option", &api.JobSpec{MailUser: "-oQ/tmp"}, "Bad mail address"},
		{"description", &api.JobSpec{Description: "x\x1b[2J"}, "control character"},
		{"output file", &api.JobSpec{OutputFile: "out\n"}, "output file contains a control character"},
		{"command line", &api.JobSpec{Command: big(maxCommandLen + 1)}, "command line is too long"},
		{"script", &api.JobSpec{Command: big(maxScriptLen + 1), CommandIsScript: true}, "job script is too long"},
		{"command NUL", &api.JobSpec{Command: "a\x00b"}, "NUL"},
		{"env count", &api.JobSpec{Env: manyEnv}, "too many variables"},
		{"env size", &api.JobSpec{Env: []string{"A=" + big(maxEnvVarLen)}}, "environment variable A is too long"},
		{"env total", &api.JobSpec{Env: []string{"A=" + big(maxEnvVarLen-8), "B=" + big(maxEnvVarLen-8),
			"C=" + big(maxEnvVarLen-8), "D=" + big(maxEnvVarLen-8), "E=" + big(maxEnvVarLen-8), "F=" + big(maxEnvVarLen-8),
			"G=" + big(maxEnvVarLen-8), "H=" + big(maxEnvVarLen-8), "I=" + big(maxEnvVarLen-8), "J=" + big(maxEnvVarLen-8),
			"K=" + big(maxEnvVarLen-8), "L=" + big(maxEnvVarLen-8), "M=" + big(maxEnvVarLen-8), "N=" + big(maxEnvVarLen-8),
			"O=" + big(maxEnvVarLen-8), "P=" + big(maxEnvVarLen-8), "Q=" + big(maxEnvVarLen-8)}}, "environment is too large"},
		{"env no name", &api.JobSpec{Env: []string{"=x"}}, "Bad environment variable"},
		{"res_req length", &api.JobSpec{ResReq: []string{"select[" + big(maxResReqLen) + "]"}}, "resource requirement (-R) is too long"},
		{"res_req count", &api.JobSpec{ResReq: make([]string, maxResReqs+1)}, "Too many resource requirements"},
		{"dependency length", &api.JobSpec{Dependency: strings.Repeat("1||", maxDepLen)}, "dependency condition is too long"},
		{"tasks overflow", &api.JobSpec{MinTasks: -2147483648, MaxTasks: -2147483648}, "Bad argument for option -n"},
		{"tasks too many", &api.JobSpec{MinTasks: 1, MaxTasks: maxTasks + 1}, "Bad argument for option -n"},
		{"tasks max below min", &api.JobSpec{MinTasks: 4, MaxTasks: 2}, "Bad argument for option -n"},
		{"memory overflow", &api.JobSpec{MemLimitKb: -9223372036854775808}, "Bad MEMLIMIT specification"},
		{"memory too big", &api.JobSpec{MemLimitKb: 1 << 60}, "Bad MEMLIMIT specification"},
		{"swap negative", &api.JobSpec{SwapLimitKb: -1}, "Bad SWAPLIMIT specification"},
		{"run limit overflow", &api.JobSpec{RunLimitSec: -60}, "Bad RUNLIMIT specification"},
		{"run limit too long", &api.JobSpec{RunLimitSec: 9223372036854775807}, "Bad RUNLIMIT specification"},
		{"cpu limit", &api.JobSpec{CpuLimitSec: -1}, "Bad CPULIMIT specification"},
		{"begin time", &api.JobSpec{BeginTime: -5}, "Bad time specification (-b)"},
		{"array limit", &api.JobSpec{ArrayLimit: -1}, "Job array index error"},
		{"process limit", &api.JobSpec{ProcessLimit: -1}, "PROCESSLIMIT"},
		{"umask", &api.JobSpec{Umask: 0o7777}, "Bad umask"},
		{"interactive mode", &api.JobSpec{Interactive: 99}, "Bad interactive mode"},
	} {
		if tc.spec.Command == "" {
			tc.spec.Command = "true"
		}
		_, err := c.Submit(alice, tc.spec)
		var ue *UserError
		if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	// The limits are not in the way of an ordinary job.
	if _, err := c.Submit(alice, &api.JobSpec{Command: "true", JobName: "ok\tname", MailUser: "me@example.org",
		MinTasks: 1, MaxTasks: 2, MemLimitKb: 1 << 20, RunLimitSec: 3600, Env: []string{"A=1", "F=() { echo\n}"}}); err != nil {
		t.Errorf("an ordinary job: %v", err)
	}
}

// TestModifyLimits: bmod is held to the same limits as bsub, and the
// array part of bmod -J is refused, not dropped.
func TestModifyLimits(t *testing.T) {
	c, _ := newTestController(t, 2, -1)
	r, err := c.Submit(alice, &api.JobSpec{Command: "true", Hold: true})
	if err != nil {
		t.Fatal(err)
	}
	ref := &api.JobRef{JobId: r.JobId}
	for _, tc := range []struct {
		name   string
		spec   *api.JobSpec
		fields []string
		want   string
	}{
		{"run limit overflow", &api.JobSpec{RunLimitSec: -60}, []string{"run_limit_sec"}, "Bad RUNLIMIT specification"},
		{"memory overflow", &api.JobSpec{MemLimitKb: -1 << 63}, []string{"mem_limit_kb"}, "Bad MEMLIMIT specification"},
		{"mail newline", &api.JobSpec{MailUser: "a\nBcc: b"}, []string{"mail_user"}, "control character"},
		{"huge array", &api.JobSpec{JobName: "a", ArraySpec: "[1-100000000]"}, []string{"job_name", "array_spec"}, "Job array index too large"},
		{"new array", &api.JobSpec{JobName: "a", ArraySpec: "[1-10]"}, []string{"job_name", "array_spec"}, errArrayIndices},
		{"config-owned field", &api.JobSpec{JobStarter: "evil"}, []string{"job_starter"}, "cannot be modified"},
	} {
		reply := c.Modify(alice, &api.ModifyRequest{Ref: ref, Spec: tc.spec, Fields: tc.fields})
		if got := reply.Results[0].Error; !strings.Contains(got, tc.want) {
			t.Errorf("%s: got %q, want an error with %q", tc.name, got, tc.want)
		}
	}
	if got := c.Modify(alice, &api.ModifyRequest{Ref: ref, Spec: &api.JobSpec{RunLimitSec: 600}, Fields: []string{"run_limit_sec"}}).Results[0].Error; got != "" {
		t.Errorf("an ordinary bmod -W: %s", got)
	}
}

// TestDependencyDepth: a -w nested 4M parentheses deep overflowed the
// parser's stack and killed xced.
func TestDependencyDepth(t *testing.T) {
	for _, s := range []string{
		strings.Repeat("(", 4<<20) + "1" + strings.Repeat(")", 4<<20),
		strings.Repeat("!", 4<<20) + "1",
		strings.Repeat("(!", maxDepDepth) + "1" + strings.Repeat(")", maxDepDepth),
	} {
		if _, err := parseDependency(s); err == nil {
			t.Errorf("a %d-byte nested expression parsed", len(s))
		}
	}
	ok := strings.Repeat("(", maxDepDepth) + "done(1)" + strings.Repeat(")", maxDepDepth)
	if _, err := parseDependency(ok); err != nil {
		t.Errorf("%d levels: %v", maxDepDepth, err)
	}
	c, _ := newTestController(t, 2, -1)
	_, err := c.Submit(alice, &api.JobSpec{Command: "true", Dependency: strings.Repeat("(", 2000) + "1" + strings.Repeat(")", 2000)})
	if err == nil || !strings.Contains(err.Error(), "nested too deeply") {
		t.Errorf("bsub -w nested 2000 deep: %v", err)
	}
}

// TestDependencyCycle: a cycle made with bmod -w (or with a job name the
// others wait for) pended forever; the request that closes it is refused.
func TestDependencyCycle(t *testing.T) {
	c, _ := newTestController(t, 2, -1)
	hold, err := c.Submit(alice, &api.JobSpec{Command: "true", Hold: true})
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Submit(alice, &api.JobSpec{Command: "true", JobName: "a", Dependency: fmt.Sprintf("done(%d)", hold.JobId)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Submit(alice, &api.JobSpec{Command: "true", JobName: "b", Dependency: fmt.Sprintf("done(%d)", a.JobId)})
	if err != nil {
		t.Fatal(err)
	}
	mod := func(id int64, dep string) string {
		return c.Modify(alice, &api.ModifyRequest{Ref: &api.JobRef{JobId: id}, Spec: &api.JobSpec{Dependency: dep}, Fields: []string{"dependency"}}).Results[0].Error
	}
	for _, dep := range []string{fmt.Sprintf("done(%d) && ended(%d)", hold.JobId, b.JobId), "done(b)", "ended(\"b*\")", fmt.Sprintf("done(%d)", a.JobId)} {
		if got := mod(a.JobId, dep); !strings.Contains(got, "cycle") && !strings.Contains(got, "itself") {
			t.Errorf("bmod -w %q of job %d: %q, want the cycle refused", dep, a.JobId, got)
		}
	}
	// A new job named for what an earlier one waits for, waiting for it.
	if _, err := c.Submit(alice, &api.JobSpec{Command: "true", JobName: "c", Dependency: "done(d)"}); err == nil {
		t.Fatal("done(d) with no job d accepted")
	}
	d, err := c.Submit(alice, &api.JobSpec{Command: "true", JobName: "d", Hold: true})
	if err != nil {
		t.Fatal(err)
	}
	e, err := c.Submit(alice, &api.JobSpec{Command: "true", JobName: "e", Dependency: "done(d)"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Submit(alice, &api.JobSpec{Command: "true", JobName: "d", Dependency: fmt.Sprintf("done(%d)", e.JobId)}); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("a second job d waiting for e, which waits for every d: %v", err)
	}
	// What is no cycle stays allowed.
	if got := mod(b.JobId, fmt.Sprintf("done(%d) && done(%d)", a.JobId, d.JobId)); got != "" {
		t.Errorf("bmod -w without a cycle: %s", got)
	}
}

// TestMaxPendJobs: LSF's MAX_PEND_JOBS, cluster-wide and per user; the
// refusal is a retryable ResourceExhausted with lsb.err's text.
func TestMaxPendJobs(t *testing.T) {
	c, _ := newTestControllerWith(t, testConfig+`
[users.default]
max_pend_jobs = 3
`, 2, -1)
	for i := 0; i < 3; i++ {
		if _, err := c.Submit(alice, &api.JobSpec{Command: "true", Hold: true}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := c.Submit(alice, &api.JobSpec{Command: "true", Hold: true})
	if err == nil || err.Error() != errPendThreshold {
		t.Fatalf("a 4th pending job: %v, want %q", err, errPendThreshold)
	}
	if st, _ := status.FromError(toStatus(err)); st.Code() != codes.ResourceExhausted {
		t.Errorf("code %v, want ResourceExhausted (retryable)", st.Code())
	}
	// Another user has a threshold of his own.
	bob := Caller{UID: 1001, GID: 1001}
	if _, err := c.Submit(bob, &api.JobSpec{Command: "true", Hold: true}); err != nil {
		t.Errorf("another user: %v", err)
	}
	// An array counts each element.
	if _, err := c.Submit(bob, &api.JobSpec{Command: "true", Hold: true, JobName: "arr", ArraySpec: "[1-3]"}); err == nil {
		t.Error("a 3-element array beyond the threshold accepted")
	}
}
