package tests

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"xce/lib/api"
	"xce/lib/client"
)

// helperEnv makes the test binary a helper (testHelper) instead of the
// tests: a program of the module that a test runs as another user.
const helperEnv = "XCE_TEST_HELPER"

// testHelper runs helper name: "envs" queries every job through the API,
// as the raw client it is, and prints every environment entry it got.
func testHelper(name string, args []string) int {
	switch name {
	case "envs":
		cl, err := client.Dial()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		jobs, err := cl.Query(ctx, &api.QueryRequest{Scope: api.QueryRequest_ALL, User: "all", Submitted: true})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		for _, j := range jobs.Jobs {
			envs := append(append([]string{}, j.GetSpec().GetEnv()...), j.GetEffective().GetEnv()...)
			envs = append(envs, j.GetSpec().GetEnvSpec(), j.GetEffective().GetEnvSpec())
			for _, e := range envs {
				fmt.Printf("%d %s\n", j.JobId, e)
			}
		}
		return 0
	}
	fmt.Fprintf(os.Stderr, "no helper %q\n", name)
	return 2
}

// runHelper runs testHelper name as uid, from a copy of the test binary
// that other users can run.
func runHelper(t *testing.T, c *cluster, uid int, name string) string {
	t.Helper()
	bin := filepath.Join(binDir, "tests-helper")
	if _, err := os.Stat(bin); err != nil {
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		in, err := os.Open(self)
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
		if err == nil {
			_, err = io.Copy(out, in)
			out.Close()
		}
		in.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), helperEnv+"="+name, "XCE_DIR="+filepath.Join(c.dir, "state"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	cmd.Dir = c.work
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper %s as uid %d: %v\n%s", name, uid, err, out)
	}
	return string(out)
}

// Finding: the query API returned another user's job's environment
// (bsub's -env values: tokens, passwords) to any user. Now only the job's
// owner and the administrators get it, as with LSF's bjobs -env.
func TestTrustOtherUsersEnv(t *testing.T) {
	alice := testUser(t, "xcetest1")
	bob := testUser(t, "xcetest2")
	c := trustCluster(t)
	r := c.runWith(alice, []string{"XCE_SECRET_TOKEN=hunter2-token"}, "", "bsub", "-H", "-o", "/dev/null",
		"-env", "all, XCE_OTHER_TOKEN=hunter2-token", "true")
	if r.code != 0 {
		t.Fatalf("bsub as alice: %d %q", r.code, r.stderr)
	}
	if out := runHelper(t, c, alice, "envs"); !strings.Contains(out, "hunter2-token") {
		t.Fatalf("the owner's own query shows no environment; the test cannot tell:\n%s", out)
	}
	if out := runHelper(t, c, bob, "envs"); strings.Contains(out, "hunter2-token") {
		t.Errorf("another user's query returned the job's environment:\n%s", out)
	}
}

// Finding: bpeek made root open the job's -o path: a job that turned a
// directory of its -o path into a link to a directory closed to its user
// had root open the file there (then refuse it as not the user's), and
// the error told whether the file existed. Now the file is opened with the
// job's user's identity, and the error is one whatever the cause.
func TestTrustPeekPath(t *testing.T) {
	uid := testUser(t, "xcetest1")
	c := trustCluster(t)
	secret := filepath.Join(c.dir, "secret")
	if err := os.Mkdir(secret, 0o700); err != nil {
		t.Fatal(err)
	}
	shadow := filepath.Join(secret, "shadow")
	if err := os.WriteFile(shadow, []byte("root:secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Any open of the secret file shows here.
	in, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(in)
	if _, err := unix.InotifyAddWatch(in, shadow, unix.IN_OPEN); err != nil {
		t.Fatal(err)
	}
	// Each job drops its spool file, so bpeek reads its -o path, and
	// makes the path's directory a link to the secret directory.
	job := func(lnk, file string) string {
		return submitAs(t, c, uid, "-o", lnk+"/"+file,
			`d=$(dirname "$LSB_JOBFILENAME"); rm -f "$d/output" "$LSB_JOBFILENAME.out"; ln -s `+secret+` `+lnk+
				`; touch `+c.work+`/ready.$LSB_JOBID; sleep 300`)
	}
	there := job("lnk1", "shadow")
	missing := job("lnk2", "nosuch")
	for _, id := range []string{there, missing} {
		c.waitState(id, "RUN")
		waitFile(t, filepath.Join(c.work, "ready."+id))
	}
	var buf [4096]byte
	unix.Read(in, buf[:]) // the test's own writes
	a := c.runAs(uid, "", "bpeek", there)
	b := c.runAs(uid, "", "bpeek", missing)
	if n, _ := unix.Read(in, buf[:]); n > 0 {
		t.Errorf("bpeek opened %s, a file in a directory the job's user cannot enter", shadow)
	}
	if a.code == 0 || strings.Contains(a.stdout, "secret") {
		t.Errorf("bpeek of the job whose -o leads to %s: %d %q %q", shadow, a.code, a.stdout, a.stderr)
	}
	sameA := strings.ReplaceAll(a.stderr, there, "ID")
	sameB := strings.ReplaceAll(b.stderr, missing, "ID")
	if sameA != sameB || a.code != b.code {
		t.Errorf("bpeek tells an existing file the user cannot see (%d %q) from a missing one (%d %q)",
			a.code, a.stderr, b.code, b.stderr)
	}
	c.must("", "bkill", "-r", there, missing)
}

// Finding: a job's command (and so its default name) reached other users' terminals raw:
// ESC sequences in them cleared the screen or retitled the terminal of
// whoever ran bjobs, bhist or bacct. Now every command escapes control
// characters in what it prints.
func TestTrustControlCharsEscaped(t *testing.T) {
	c := newCluster(t)
	// Job names refuse control characters; a command is the job's name
	// when -J is not given.
	id := c.submit("", "-o", "/dev/null", "echo '\x1b[2J\x1b]0;pwned\x07'")
	c.waitState(id, "DONE")
	for _, argv := range [][]string{
		{"bjobs", "-l", id}, {"bjobs", "-w", id}, {"bjobs", "-a", "-w"}, {"bhist", "-l", id}, {"bacct", "-l", id},
	} {
		out := c.must("", argv[0], argv[1:]...)
		if strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("%s prints control characters raw:\n%q", strings.Join(argv, " "), out)
		}
		if !strings.Contains(out, `\x1b[2J`) {
			t.Errorf("%s does not show the name escaped:\n%q", strings.Join(argv, " "), out)
		}
	}
}
