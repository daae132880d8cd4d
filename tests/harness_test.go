// Package tests holds XCE's end-to-end tests: they build the real binaries,
// start xced in a temporary directory on its own socket, and drive it with
// the real commands as a user's shell would.
package tests

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"xce/lib/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// binDir holds the binaries built once for the whole run.
var binDir string

var commands = []string{"bsub", "bjobs", "bkill", "bstop", "bresume", "bqueues", "bhosts", "bhist", "bpeek", "lsid", "lshosts", "lsload", "busers", "bacct", "badmin", "bapp", "bswitch", "brequeue", "btop", "bbot", "bwait", "xcetop", "bparams", "bugroup", "bmgroup", "bmod", "bjgroup", "lsadmin", "lsinfo", "blaunch", "blimits", "brsvadd", "brsvdel", "brsvs", "brsvjob", "brsvmod", "bgadd", "bgdel", "bgmod", "bclaim", "battach"}

func TestMain(m *testing.M) {
	if h := os.Getenv(helperEnv); h != "" {
		// The test binary run as another user (runHelper).
		os.Exit(testHelper(h, os.Args[1:]))
	}
	flag.Parse()
	dir, err := os.MkdirTemp("", "xce-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Built as the Makefile builds them (see its build target).
	pkgs := []string{"../daemon", "../daemon/shepherd", "../daemon/dial"}
	for _, c := range commands {
		pkgs = append(pkgs, "../"+c)
	}
	ldflags := buildLDFlags()
	// As many builds at once as there are CPUs: most of each is the link,
	// which one go build does on one CPU.
	var (
		builds   sync.WaitGroup
		slots    = make(chan struct{}, runtime.NumCPU())
		failedMu sync.Mutex
		failed   error
	)
	for _, p := range pkgs {
		name := filepath.Base(p)
		switch name {
		case "daemon":
			name = "xced"
		case "shepherd":
			name = "xce-shepherd"
		case "dial":
			name = "xce-dial"
		}
		builds.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			build := exec.Command("go", "build", "-tags", "grpcnotrace", "-ldflags", ldflags, "-o", filepath.Join(dir, name), p)
			if name != "xced" {
				build.Env = append(os.Environ(), "CGO_ENABLED=0")
			}
			if out, err := build.CombinedOutput(); err != nil {
				failedMu.Lock()
				failed = fmt.Errorf("build %s: %v\n%s", p, err, out)
				failedMu.Unlock()
			}
		})
	}
	builds.Wait()
	if failed != nil {
		fmt.Fprintln(os.Stderr, failed)
		os.Exit(1)
	}
	os.Chmod(dir, 0o755) // other users run them too
	binDir = dir
	// A scratch cgroup parent for every xced a test starts by hand (a
	// cluster of the harness names its own): none makes cgroups under the
	// host's real one.
	parent := "xce-e2e-" + filepath.Base(dir)
	os.Setenv("XCE_CGROUP_PARENT", parent)
	code := m.Run()
	testenv.RemoveCgroupTree(parent)
	os.RemoveAll(dir)
	os.Exit(code)
}

// testRelease is the release the tests' binaries are built with, as the
// Makefile's VERSION sets it.
const testRelease = "0.1.0-test"

// buildLDFlags stamps the release and the revision into the binaries the
// way the Makefile does (lib/version).
func buildLDFlags() string {
	rev := "unknown"
	if out, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output(); err == nil {
		rev = strings.TrimSpace(string(out))
	}
	return "-X xce/lib/version.release=" + testRelease + " -X xce/lib/version.revision=" + rev
}

// cluster is one xced in its own directory.
type cluster struct {
	t    *testing.T
	dir  string
	work string // a scratch directory jobs run in
	cmd  *exec.Cmd
	log  *bytes.Buffer
	args []string
	env  []string // added to xced's environment
}

func newCluster(t *testing.T, args ...string) *cluster {
	t.Helper()
	return newClusterEnv(t, nil, args...)
}

// newClusterEnv starts an xced with env added to its environment.
func newClusterEnv(t *testing.T, env []string, args ...string) *cluster {
	t.Helper()
	dir, err := os.MkdirTemp("", "xce-")
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	os.MkdirAll(work, 0o755)
	// The jobs' cgroups go under a scratch parent of this cluster's own,
	// so that no two clusters on this machine share one.
	parent := "xce-e2e-" + filepath.Base(dir)
	env = append(append([]string{}, env...), "XCE_CGROUP_PARENT="+parent)
	c := &cluster{t: t, dir: dir, work: work, args: args, env: env}
	t.Cleanup(func() { testenv.RemoveCgroupTree(parent) })
	t.Cleanup(func() {
		if c.cmd != nil {
			// Jobs outlive xced: end the test's jobs so that none keeps
			// running after it (bkill -r: at once, SIGKILL).
			c.runQuiet("bkill", "-r", "-u", "all", "0")
		}
		c.stop()
		// Let killed jobs' shepherds finish before removing their files.
		time.Sleep(100 * time.Millisecond)
		os.RemoveAll(dir)
	})
	c.start()
	return c
}

func (c *cluster) start() {
	c.t.Helper()
	args := append([]string{"--dir", filepath.Join(c.dir, "state"), "--slots", "4",
		"--terminate-interval", "1s", "--runlimit-grace", "2s"}, c.args...)
	c.cmd = exec.Command(filepath.Join(binDir, "xced"), args...)
	if c.env != nil {
		c.cmd.Env = append(os.Environ(), c.env...)
	}
	c.log = &bytes.Buffer{}
	c.cmd.Stdout, c.cmd.Stderr = c.log, c.log
	if err := c.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	sock := filepath.Join(c.dir, "state", "xced.sock")
	for i := 0; i < 400; i++ {
		if _, err := os.Stat(sock); err == nil {
			if r := c.run("", "bqueues"); r.code == 0 {
				return
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	c.t.Fatalf("xced did not come up:\n%s", c.log)
}

// stop ends xced with SIGTERM.
func (c *cluster) stop() {
	stopProcess(c.cmd)
	c.cmd = nil
}

// stopProcess ends a started xced (or xced worker) with SIGTERM, and with
// SIGKILL if it has not gone within 10 s.
func stopProcess(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// crash ends xced with SIGKILL.
func (c *cluster) crash() {
	c.cmd.Process.Kill()
	c.cmd.Wait()
	c.cmd = nil
}

type result struct {
	stdout, stderr string
	code           int
}

// run runs a command as a user's shell would, in the work directory.
func (c *cluster) run(stdin string, name string, args ...string) result {
	return c.runAs(-1, stdin, name, args...)
}

// runAs runs a command as another user (uid >= 0; the tests must run as
// root for that).
func (c *cluster) runAs(uid int, stdin string, name string, args ...string) result {
	return c.runWith(uid, nil, stdin, name, args...)
}

// runEnv runs a command with extra environment (LSF_ENVDIR).
func (c *cluster) runEnv(env []string, name string, args ...string) result {
	return c.runWith(-1, env, "", name, args...)
}

// runWith runs a command in the work directory, as uid when it is not
// negative, with env added to the environment.
func (c *cluster) runWith(uid int, env []string, stdin string, name string, args ...string) result {
	c.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	if uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	}
	cmd.Dir = c.work
	cmd.Env = append(append(os.Environ(), "XCE_DIR="+filepath.Join(c.dir, "state"), "PATH="+binDir+":"+os.Getenv("PATH")), env...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatalf("%s: %v", name, err)
	}
	return result{out.String(), errb.String(), code}
}

// runQuiet runs a command whose outcome does not matter (cleanup).
func (c *cluster) runQuiet(name string, args ...string) {
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	cmd.Dir = c.work
	cmd.Env = append(os.Environ(), "XCE_DIR="+filepath.Join(c.dir, "state"))
	cmd.Run()
}

// must runs a command that has to succeed.
func (c *cluster) must(stdin, name string, args ...string) string {
	c.t.Helper()
	r := c.run(stdin, name, args...)
	if r.code != 0 {
		c.t.Fatalf("%s %s: exit %d\nstdout: %s\nstderr: %s", name, strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

var submittedRE = regexp.MustCompile(`^Job <(\d+)> is submitted to (default )?queue <(\w+)>\.\n$`)

// submit runs bsub and returns the job id.
func (c *cluster) submit(stdin string, args ...string) string {
	c.t.Helper()
	out := c.must(stdin, "bsub", args...)
	m := submittedRE.FindStringSubmatch(out)
	if m == nil {
		c.t.Fatalf("bsub said %q", out)
	}
	return m[1]
}

// stat returns a job's state as bjobs prints it.
func (c *cluster) stat(id string) string {
	out := c.must("", "bjobs", "-a", "-noheader", "-o", "stat", id)
	return strings.TrimSpace(out)
}

// waitState waits until every line of bjobs -o stat for id is one of want.
func (c *cluster) waitState(id string, want ...string) string {
	c.t.Helper()
	return c.waitStateWithin(id, 30*time.Second, want...)
}

// waitStateWithin is waitState waiting up to d.
func (c *cluster) waitStateWithin(id string, d time.Duration, want ...string) string {
	c.t.Helper()
	deadline := time.Now().Add(d)
	var s string
	for time.Now().Before(deadline) {
		s = c.stat(id)
		ok := s != ""
		for _, line := range strings.Split(s, "\n") {
			hit := false
			for _, w := range want {
				hit = hit || strings.TrimSpace(line) == w
			}
			ok = ok && hit
		}
		if ok {
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("job %s: state %q, want %v\nxced log:\n%s", id, s, want, c.log)
	return ""
}

// golden compares got with testdata/name.golden.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tests -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// The dates the formats print, on every calendar day: LSF pads the day
// with a space in some formats ("Dec  1 18:52", "Tue Dec  1 18:52:05 2026")
// and not in others ("Tue Dec 1 18:52:05"), so a pattern that assumed two
// characters for the day matched only from the 10th of a month on.
var (
	fullDateRE  = regexp.MustCompile(`\b[A-Z][a-z]{2} [A-Z][a-z]{2} {1,2}\d{1,2} \d\d:\d\d:\d\d( \d{4})?`)
	shortDateRE = regexp.MustCompile(`\b[A-Z][a-z]{2} ( \d|\d{1,2}) \d\d:\d\d\b`)
	numDateRE   = regexp.MustCompile(`\b\d\d/\d\d-\d\d:\d\d:\d\d\b`)
)

// maskDates replaces every date: "Tue Dec 1 18:52:05" (with or without a
// year, padded or not) by DATE, "Dec  1 18:52" by "Mmm dd hh:mm" (the same
// width when padded, as the tables print it) and "12/01-18:52:05" by
// "MM/DD-hh:mm:ss".
func maskDates(s string) string {
	s = fullDateRE.ReplaceAllString(s, "DATE")
	s = numDateRE.ReplaceAllString(s, "MM/DD-hh:mm:ss")
	return shortDateRE.ReplaceAllString(s, "Mmm dd hh:mm")
}

// normalize replaces what differs between runs and machines: the user,
// the host, dates and times.
func normalize(s string) string {
	host, _ := os.Hostname()
	if i := strings.IndexByte(host, '.'); i > 0 {
		host = host[:i]
	}
	user := os.Getenv("USER")
	if user == "" {
		user = "root"
	}
	s = maskDates(s)
	s = strings.ReplaceAll(s, host, "HOST")
	s = regexp.MustCompile(`\b`+regexp.QuoteMeta(user)+`\b`).ReplaceAllString(s, "USER")
	return s
}

// normalizeTable masks the user and host columns of bjobs's default table
// (fixed columns), keeping the widths, then dates and times.
func normalizeTable(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if i == 0 || len(l) < 68 {
			continue
		}
		b := []byte(l)
		mask := func(from, to int, word string) {
			if strings.TrimSpace(string(b[from:to])) == "" {
				return
			}
			copy(b[from:to], fmt.Sprintf("%-*s", to-from, word))
		}
		mask(8, 15, "USER")
		mask(33, 44, "HOST")
		mask(45, 56, "HOST")
		lines[i] = string(b)
	}
	return normalize(strings.Join(lines, "\n"))
}

// The masking covers every calendar day, padded and unpadded.
func TestMaskDates(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Tue Dec 1 18:52:05: Submitted", "DATE: Submitted"},
		{"Thu Dec 31 23:59:59: Submitted", "DATE: Submitted"},
		{"Fri Jan  1 00:00:01 2027", "DATE"},
		{"Results reported at Fri Jan 1 00:00:01 2027\n", "Results reported at DATE\n"},
		{"sleep 1    Dec  1 18:52\n", "sleep 1    Mmm dd hh:mm\n"},
		{"sleep 1    Dec 31 23:59\n", "sleep 1    Mmm dd hh:mm\n"},
		{"12/01-18:52:05 01/01-00:00:01", "MM/DD-hh:mm:ss MM/DD-hh:mm:ss"},
	} {
		if got := maskDates(tc.in); got != tc.want {
			t.Errorf("maskDates(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
