package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"xce/lib/api"
	"xce/lib/client"
	"xce/lib/rpcstatus"
)

// badCase is one mistake and what the command must answer: its message on
// stderr (exactly, or matching a regular expression), nothing on stdout,
// and its exit status. "{run}", "{pend}"... in argv and the expected text
// stand for the IDs of the jobs TestBadInputEveryCommand sets up in those
// states.
type badCase struct {
	argv   []string
	stderr string // the whole of stderr
	re     string // or a regular expression stderr must match
	code   int
	other  bool   // run as another user (uid 65534), which needs root
	skip   string // the fix it needs, in a file someone else owns now
}

// Every command's answer to bad input, as LSF gives it: unknown options,
// missing arguments, malformed job IDs, unknown jobs, queues, hosts and
// users, another user's job, and jobs in a state where the action makes
// no sense. Texts are LSF's (lsb.err and OpenLava's commands) where known;
// the cases marked XCE are XCE's wording where LSF's is not known.
func TestBadInputEveryCommand(t *testing.T) {
	c := newCluster(t)
	root := os.Geteuid() == 0
	if root {
		os.Chmod(c.dir, 0o755)
		os.Chmod(c.work, 0o777)
	}
	ids := map[string]string{}
	// Jobs outlive xced: end them before the cluster goes.
	t.Cleanup(func() { killJobs(c, ids["run"], ids["ususp"]) })
	ids["run"] = c.submit("", "sleep 1000")
	ids["ususp"] = c.submit("", "sleep 1000")
	ids["psusp"] = c.submit("", "-H", "true")
	ids["pend"] = c.submit("", "-w", "done("+ids["run"]+")", "true")
	ids["done"] = c.submit("", "true")
	ids["exit"] = c.submit("", "exit 3")
	c.waitState(ids["run"], "RUN")
	c.waitState(ids["ususp"], "RUN")
	c.must("", "bstop", ids["ususp"])
	c.waitState(ids["ususp"], "USUSP")
	c.waitState(ids["done"], "DONE")
	c.waitState(ids["exit"], "EXIT")

	usage := func(cmd string) string { return `\nUsage: ` + cmd + `( .*)?\n$` }
	var cases []badCase
	add := func(cs ...badCase) { cases = append(cases, cs...) }

	// An unknown option: getopt's message, then the usage.
	for _, cmd := range []string{"bsub", "bjobs", "bkill", "bstop", "bresume", "bqueues", "bhosts", "bhist", "bpeek",
		"lsid", "lshosts", "lsload", "busers", "bacct", "badmin", "bapp", "bswitch", "brequeue", "btop", "bbot",
		"bwait", "bparams", "bugroup", "bmgroup", "bmod"} {
		add(badCase{argv: []string{cmd, "-Y"}, re: `^` + cmd + `: illegal option -- Y` + usage(cmd), code: 255})
	}
	// An option without its argument.
	for _, argv := range [][]string{{"bsub", "-q"}, {"bjobs", "-u"}, {"bkill", "-s"}, {"bstop", "-J"}, {"bresume", "-q"},
		{"bhist", "-S"}, {"bpeek", "-q"}, {"bacct", "-u"}, {"badmin", "qclose", "-C"}, {"bwait", "-w"}, {"bmod", "-W"}} {
		flag := argv[len(argv)-1][1:]
		add(badCase{argv: argv, re: `^` + argv[0] + `: option requires an argument -- ` + flag + usage(argv[0]), code: 255})
	}
	// A missing operand.
	add(
		badCase{argv: []string{"bsub"}, stderr: "No command is specified in the script file. Job not submitted.\n", code: 255},
		badCase{argv: []string{"bswitch"}, stderr: "The destination queue name must be specified.\n", code: 255},
		badCase{argv: []string{"bswitch", "normal"}, re: `^Job ID must be specified.` + usage("bswitch"), code: 255}, // XCE
		badCase{argv: []string{"brequeue"}, re: `^Job ID must be specified.` + usage("brequeue"), code: 255},         // XCE
		badCase{argv: []string{"btop"}, re: `^Usage: btop .*\n$`, code: 255},
		badCase{argv: []string{"bbot", "1", "2", "3"}, re: `^Usage: bbot .*\n$`, code: 255},
		badCase{argv: []string{"bmod"}, stderr: "A job ID must be specified. Job not modified.\n", code: 255},
		badCase{argv: []string{"bwait"}, re: `^Usage: bwait .*\n$`, code: 255},
		badCase{argv: []string{"bpeek", "1", "2"}, re: `^Usage: bpeek .*\n$`, code: 255},
		badCase{argv: []string{"bparams", "extra"}, re: `^Usage: bparams \[-a\] \[-l\]\n$`, code: 255},
		badCase{argv: []string{"lsid", "extra"}, re: `^lsid: extra operand extra` + usage("lsid"), code: 255},
		badCase{argv: []string{"badmin", "showstatus", "extra"}, re: `^Usage: badmin .*\n$`, code: 255},
		badCase{argv: []string{"badmin", "nosuch"}, re: `^nosuch: Invalid command` + usage("badmin"), code: 255}, // XCE
	)
	// Malformed job IDs: OpenLava's getJobIdIndexList texts.
	malformed := map[string]string{
		"12x":    "12x: Illegal job ID.\n",
		"[3]":    "[3]: Illegal job ID.\n",
		"1[0]":   "0: Job Array index out of valid range.\n",
		"1[2":    "1[2: Bad job array index list.\n",
		"0[1]":   "0[1]: Job ID out of valid range.\n",
		"1[3-2]": "3-2: Job Array index invalid range.\n",
	}
	for _, pre := range [][]string{{"bjobs"}, {"bkill"}, {"bstop"}, {"bresume"}, {"bhist"}, {"bpeek"}, {"brequeue"},
		{"btop"}, {"bbot"}, {"bacct"}, {"bswitch", "normal"}, {"bmod", "-W", "5"}} {
		for id, msg := range malformed {
			add(badCase{argv: append(append([]string{}, pre...), id), stderr: msg, code: 255})
		}
	}
	// A job that does not exist.
	add(
		badCase{argv: []string{"bjobs", "99"}, stderr: "Job <99> is not found\n", code: 0},
		badCase{argv: []string{"bkill", "99"}, stderr: "Job <99>: No matching job found\n", code: 255},
		badCase{argv: []string{"bstop", "99"}, stderr: "Job <99>: No matching job found\n", code: 255},
		badCase{argv: []string{"bresume", "99"}, stderr: "Job <99>: No matching job found\n", code: 255},
		badCase{argv: []string{"bhist", "99"}, stderr: "No matching job found\n", code: 255},
		badCase{argv: []string{"bpeek", "99"}, stderr: "Job <99> is not found\n", code: 255},
		badCase{argv: []string{"btop", "99"}, stderr: "Job <99>: No matching job found\n", code: 255},
		badCase{argv: []string{"bbot", "99"}, stderr: "Job <99>: No matching job found\n", code: 255},
		badCase{argv: []string{"brequeue", "99"}, stderr: "Job <99>: No matching job found\n", code: 255},
		badCase{argv: []string{"bswitch", "normal", "99"}, stderr: "Job <99>: No matching job found\n", code: 255},
		badCase{argv: []string{"bmod", "-W", "5", "99"}, stderr: "No matching job found. Job not modified.\n", code: 255},
		badCase{argv: []string{"bmod", "-W", "5", "{pend}[1]"}, stderr: "No matching job found. Job not modified.\n", code: 255},
		badCase{argv: []string{"bacct", "99"}, stderr: "Job <99> is not found\nNo matching job found\n", code: 255},
		badCase{argv: []string{"bwait", "-w", "done(99)"}, stderr: "99: No matching job found\n", code: 255},
		badCase{argv: []string{"bpeek", "-J", "nosuchname"}, stderr: "Job <nosuchname> is not found\n", code: 255},
		badCase{argv: []string{"bkill", "-J", "nosuchname"}, stderr: "Job <nosuchname> is not found\n", code: 255},
	)
	// A job in a state where the action makes no sense.
	add(
		badCase{argv: []string{"bkill", "{done}"}, stderr: "Job <{done}>: Job has already finished\n", code: 255},
		badCase{argv: []string{"bstop", "{exit}"}, stderr: "Job <{exit}>: Job has already finished\n", code: 255},
		badCase{argv: []string{"bresume", "{run}"}, stderr: "Job <{run}>: Job is not suspended\n", code: 255},             // XCE
		badCase{argv: []string{"bstop", "{ususp}"}, stderr: "Job <{ususp}>: Job has already been suspended\n", code: 255}, // XCE
		badCase{argv: []string{"bpeek", "{pend}"}, stderr: "Job <{pend}> : Not yet started.\n", code: 255},
		badCase{argv: []string{"bpeek", "{psusp}"}, stderr: "Job <{psusp}> : Not yet started.\n", code: 255},
		badCase{argv: []string{"bpeek", "{done}"}, stderr: "Job <{done}> : Already finished.\n", code: 255},
		badCase{argv: []string{"bmod", "-W", "5", "{done}"}, stderr: "Job has already finished. Job not modified.\n", code: 255},
		badCase{argv: []string{"btop", "{run}"}, stderr: "Job <{run}>: Job has already started\n", code: 255},
		badCase{argv: []string{"bbot", "{done}"}, stderr: "Job <{done}>: Job has already finished\n", code: 255},
		badCase{argv: []string{"brequeue", "{pend}"}, stderr: "Job <{pend}>: Job has not started yet\n", code: 255},
		badCase{argv: []string{"bswitch", "normal", "{done}"}, stderr: "Job <{done}>: Job has already finished\n", code: 255},
		badCase{argv: []string{"bswitch", "normal", "{run}"}, stderr: "Job <{run}>: Job has already started\n", code: 255},
		badCase{argv: []string{"bswitch", "nosuch", "{pend}"}, stderr: "Job <{pend}>: No such queue\n", code: 255},
		badCase{argv: []string{"bwait", "-w", "done({exit})"}, stderr: "Wait condition is never satisfied\n", code: 255}, // XCE
		badCase{argv: []string{"bwait", "-w", "foo({run})"}, re: `^Dependency condition syntax error`, code: 255},
		badCase{argv: []string{"bwait", "-w", "done({run})", "-t", "x"}, re: `^bwait: x: Bad argument for option -t` + usage("bwait"), code: 255},
		badCase{argv: []string{"btop", "{pend}", "0"}, stderr: "0: Invalid position\n", code: 255}, // XCE
		badCase{argv: []string{"bkill", "-s", "FOO", "{run}"}, stderr: "FOO: Illegal signal value\n", code: 255},
		badCase{argv: []string{"bpeek", "-q", "normal", "{run}"},
			re: `^Command syntax error: more than one of -m , -q, -J or jobId are specified.` + usage("bpeek"), code: 255},
		badCase{argv: []string{"bpeek", "1[1-2]"}, re: `^1\[1-2\]: Illegal job array index. One element only.` + usage("bpeek"), code: 255},
	)
	// Unknown queues, hosts, users, groups and profiles; bad time ranges.
	add(
		badCase{argv: []string{"bqueues", "nosuch"}, stderr: "nosuch: No such queue\n", code: 255},
		badCase{argv: []string{"bhosts", "nosuch"}, stderr: "nosuch: Bad host name, host group name or cluster name\n", code: 255},
		badCase{argv: []string{"lshosts", "nosuch"}, stderr: "nosuch: Bad host name, host group name or cluster name\n", code: 255}, // XCE
		badCase{argv: []string{"lsload", "nosuch"}, stderr: "nosuch: Bad host name, host group name or cluster name\n", code: 255},  // XCE
		badCase{argv: []string{"busers", "nosuchuser"}, stderr: "nosuchuser: Unknown user\n", code: 255},
		badCase{argv: []string{"bugroup", "nosuch"}, stderr: "user group: No user group defined in the system\n", code: 255},
		badCase{argv: []string{"bmgroup"}, stderr: "host group: No host group defined in the system\n", code: 255},
		badCase{argv: []string{"bapp", "nosuch"}, stderr: "nosuch: No such application profile\n", code: 255}, // XCE
		badCase{argv: []string{"badmin", "qclose", "nosuch"}, stderr: "nosuch: No such queue\n", code: 255},
		badCase{argv: []string{"bpeek", "-q", "nosuch"}, stderr: "nosuch: No such queue\n", code: 255},
		badCase{argv: []string{"bpeek", "-m", "nosuch"}, stderr: "nosuch: Bad host name, host group name or cluster name\n", code: 255},
		badCase{argv: []string{"bhist", "-C", "2026/13/1"}, stderr: "2026/13/1: Bad time specification\n", code: 255},
		badCase{argv: []string{"bhist", "-S", "2026/11/30,2026/11/1"}, stderr: "2026/11/30,2026/11/1: Bad time specification\n", code: 255},
		badCase{argv: []string{"bhist", "-D", "yesterday"}, stderr: "yesterday: Bad time specification\n", code: 255},
		badCase{argv: []string{"bhist", "-G", "nosuch"}, stderr: "nosuch: Bad user group name\n", code: 255},
		badCase{argv: []string{"bjobs", "-q", "nosuch"}, stderr: "nosuch: No such queue\n", code: 255},
		badCase{argv: []string{"bkill", "-q", "nosuch", "0"}, stderr: "nosuch: No such queue\n", code: 255},
	)
	// Another user's job: only its owner and the administrators may act on it.
	add(
		badCase{other: true, argv: []string{"bkill", "{run}"}, stderr: "Job <{run}>: User permission denied\n", code: 255},
		badCase{other: true, argv: []string{"bstop", "{run}"}, stderr: "Job <{run}>: User permission denied\n", code: 255},
		badCase{other: true, argv: []string{"bresume", "{ususp}"}, stderr: "Job <{ususp}>: User permission denied\n", code: 255},
		badCase{other: true, argv: []string{"bmod", "-W", "5", "{pend}"}, stderr: "User permission denied. Job not modified.\n", code: 255},
		badCase{other: true, argv: []string{"bswitch", "normal", "{pend}"}, stderr: "Job <{pend}>: User permission denied\n", code: 255},
		badCase{other: true, argv: []string{"btop", "{pend}"}, stderr: "Job <{pend}>: User permission denied\n", code: 255},
		badCase{other: true, argv: []string{"bbot", "{pend}"}, stderr: "Job <{pend}>: User permission denied\n", code: 255},
		badCase{other: true, argv: []string{"brequeue", "{done}"}, stderr: "Job <{done}>: User permission denied\n", code: 255},
		badCase{other: true, argv: []string{"bpeek", "{run}"}, stderr: "Job <{run}>: User permission denied\n", code: 255},
		badCase{other: true, argv: []string{"badmin", "qclose", "normal"}, stderr: "normal: User permission denied\n", code: 255},
		badCase{other: true, argv: []string{"badmin", "hclose"}, re: `^Close <[^>]+> \.\.\.\.\.\. User permission denied\n$`, code: 255},
		badCase{other: true, argv: []string{"bkill", "0"}, stderr: "No unfinished job found\n", code: 255},
	)

	expand := func(s string) string {
		for k, v := range ids {
			s = strings.ReplaceAll(s, "{"+k+"}", v)
		}
		return s
	}
	for _, tc := range cases {
		argv := make([]string, len(tc.argv))
		for i, a := range tc.argv {
			argv[i] = expand(a)
		}
		name := strings.Join(tc.argv, " ")
		if tc.other {
			name = "other " + name
		}
		t.Run(name, func(t *testing.T) {
			if tc.skip != "" {
				t.Skip(tc.skip)
			}
			uid := -1
			if tc.other {
				if !root {
					t.Skip("needs root to run as another user")
				}
				uid = 65534
			}
			r := c.runAs(uid, "", argv[0], argv[1:]...)
			ok := r.code == tc.code && r.stdout == ""
			want := expand(tc.stderr)
			if tc.re != "" {
				want = expand(tc.re)
				ok = ok && regexp.MustCompile(want).MatchString(r.stderr)
			} else {
				ok = ok && r.stderr == want
			}
			if !ok {
				t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d, no stdout, stderr %q",
					strings.Join(argv, " "), r.code, r.stdout, r.stderr, tc.code, want)
			}
		})
	}
	// Nothing above changed the jobs.
	for state, id := range map[string]string{"RUN": ids["run"], "USUSP": ids["ususp"], "PSUSP": ids["psusp"], "PEND": ids["pend"]} {
		if s := c.stat(id); s != state {
			t.Errorf("job %s is %s after the bad input, want %s", id, s, state)
		}
	}
}

// killJobs ends all of the user's jobs at once and waits until the
// running ones (ids) have ended.
func killJobs(c *cluster, ids ...string) {
	c.run("", "bkill", "-s", "KILL", "0")
	c.run("", "bkill", "0")
	for _, id := range ids {
		if id != "" {
			c.waitState(id, "EXIT", "DONE")
		}
	}
}

// TestBadInputLimits: what a user sends is bounded on the controller's
// side, and out of range is an error, never "no limit" (issue 11): the
// cases the commands can send.
func TestBadInputLimits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "xce.toml")
	if err := os.WriteFile(path, []byte("[cluster]\nmax_pend_jobs = 6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCluster(t, "--config", path)
	hold := c.submit("", "-H", "true")
	a := c.submit("", "-w", "done("+hold+")", "true")
	b := c.submit("", "-w", "done("+a+")", "true")
	refused := func(suffix, want string, args ...string) {
		t.Helper()
		r := c.run("", args[0], args[1:]...)
		if r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, want) || !strings.HasSuffix(r.stderr, suffix) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want an error with %q", args, r.code, r.stdout, r.stderr, want)
		}
	}
	notSubmitted := ". Job not submitted.\n"
	deep := strings.Repeat("(", 200) + "done(" + hold + ")" + strings.Repeat(")", 200)
	refused(notSubmitted, "nested too deeply", "bsub", "-w", deep, "true")
	refused(notSubmitted, "dependency condition is too long", "bsub", "-w", strings.Repeat("(", 60000)+"1"+strings.Repeat(")", 60000), "true")
	refused("", "nested too deeply", "bwait", "-w", deep)
	refused(notSubmitted, "mail address contains a control character", "bsub", "-u", "me@example.org\nBcc: all@example.org", "true")
	refused(notSubmitted, "Bad mail address", "bsub", "-u", "a@x,b@y", "true")
	refused(notSubmitted, "job name contains a control character", "bsub", "-J", "a\rb", "true")
	refused(notSubmitted, "Bad MEMLIMIT specification", "bsub", "-M", "99999999999999999999GB", "true")
	refused(notSubmitted, "Bad RUNLIMIT specification", "bsub", "-W", "9223372036854775807", "true")
	refused(". Job not modified.\n", "Bad RUNLIMIT specification", "bmod", "-W", "9223372036854775807", a)
	refused(". Job not modified.\n", "cycle", "bmod", "-w", "done("+hold+") && done("+b+")", a)
	refused("", "the output width must be at most 4096", "bjobs", "-o", "jobid:99999999999")
	// MAX_PEND_JOBS: three pending jobs, three more, then the threshold.
	for i := 0; i < 3; i++ {
		c.submit("", "-H", "true")
	}
	refused(notSubmitted, "Pending job threshold reached", "bsub", "-H", "true")
	// xced is still there.
	c.must("", "bqueues")
}

// TestBadInputTasksAndArrays: a task count past 32 bits is refused, not
// cut to what fits (2^40 arrived as 0, one task), and bmod -J with indices
// sends them, so the array is not silently dropped.
func TestBadInputTasksAndArrays(t *testing.T) {
	c := newCluster(t)
	for _, n := range []string{"1099511627776", "4294967297", "1,1099511627776"} {
		r := c.run("", "bsub", "-n", n, "true")
		if r.code == 0 || !strings.Contains(r.stderr, "Bad argument for option -n") {
			t.Errorf("bsub -n %s: exit %d, %q %q; want it refused", n, r.code, r.stdout, r.stderr)
		}
	}
	arr := c.submit("", "-H", "-J", "a[1-3]", "true")
	r := c.run("", "bmod", "-J", "a[1-100000000]", arr)
	if r.code == 0 || !strings.Contains(r.stderr, "Job array index too large") {
		t.Errorf("bmod -J a[1-100000000]: exit %d, %q %q; want it refused", r.code, r.stdout, r.stderr)
	}
	r = c.run("", "bmod", "-J", "a[1-5]", arr)
	if r.code == 0 || !strings.Contains(r.stderr, "cannot be modified") {
		t.Errorf("bmod -J a[1-5]: exit %d, %q %q; want the indices refused", r.code, r.stdout, r.stderr)
	}
	if out := c.must("", "bjobs", "-noheader", "-o", "jobid job_name", arr); strings.Count(out, "\n") != 3 || !strings.Contains(out, "a[1]") {
		t.Errorf("the array after the refused bmods:\n%s", out)
	}
}

// TestForgedClient: a client that is not bsub sends what the
// configuration owns (an exec chain, a job starter, an environment
// overlay, a submission host) and a request larger than any submission;
// the controller takes none of it.
func TestForgedClient(t *testing.T) {
	c := newCluster(t)
	t.Setenv("XCE_DIR", filepath.Join(c.dir, "state"))
	cl, err := client.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mark := filepath.Join(c.work, "pwned")
	reply, err := cl.Submit(ctx, &api.SubmitRequest{Spec: &api.JobSpec{
		Command:      "true",
		Cwd:          c.work,
		PreExecChain: []string{"touch " + mark + ".pre"},
		JobStarter:   "touch " + mark + ".starter; %USRCMD",
		EnvOverlay:   []string{"LD_PRELOAD=" + mark + ".so"},
		SubmitHost:   "forged-host",
		Env:          []string{"PATH=/usr/bin:/bin"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprint(reply.JobId)
	c.waitState(id, "DONE", "EXIT")
	for _, f := range []string{mark + ".pre", mark + ".starter"} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s exists: the client's exec chain ran", f)
		}
	}
	if long := c.must("", "bjobs", "-l", id); strings.Contains(long, "forged-host") {
		t.Errorf("the client's submission host is shown:\n%s", long)
	}
	// A request beyond MaxRequestBytes is refused before it is decoded.
	_, err = cl.Submit(ctx, &api.SubmitRequest{Spec: &api.JobSpec{Command: "true", CommandIsScript: true,
		Env: []string{"A=" + strings.Repeat("x", 20<<20)}}})
	if rpcstatus.CodeOf(err) != rpcstatus.ResourceExhausted {
		t.Errorf("a 20 MB request: %v, want ResourceExhausted", err)
	}
	c.must("", "bqueues")
}
