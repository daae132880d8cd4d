package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Provider scripts that follow LSF resource connector's interface: each
// is called as NAME.sh -f input.json and answers JSON on its standard
// output. @STATE@, @XCED@, @ADDR@ and @TOKEN@ are filled in by the test.
// The site's scripts start an `xced worker` per host asked for, as a
// cloud's instance would on boot.
var siteScripts = map[string]string{
	"requestMachines.sh": `#!/bin/sh
# {"template":{"templateId":T,"machineCount":N},"xce":{"hosts":[...]}}
hosts=$(sed -n 's/.*"hosts":\[\([^]]*\)\].*/\1/p' "$2" | tr -d '"' | tr ',' ' ')
req="req-$$"
: > "@STATE@/$req"
for h in $hosts; do
	d="@STATE@/w/$h"
	mkdir -p "$d"
	setsid "@XCED@" worker --controller "@ADDR@" --token-file "@TOKEN@" --dir "$d" --name "$h" \
		--slots 1 --instance "$h" --load-interval 1s </dev/null >"$d.log" 2>&1 &
	echo $! > "$d.pid"
	echo "$h" >> "@STATE@/$req"
done
echo "{\"requestId\":\"$req\",\"message\":\"starting $(echo $hosts)\"}"
`,
	"getRequestStatus.sh": `#!/bin/sh
. "$(dirname "$0")/alive.sh"
req=$(sed -n 's/.*"requestId":"\([^"]*\)".*/\1/p' "$2")
ms=""
for h in $(cat "@STATE@/$req" 2>/dev/null); do
	st=running
	alive "$(cat "@STATE@/w/$h.pid")" || st=terminated
	ms="$ms${ms:+,}{\"machineId\":\"$h\",\"name\":\"$h\",\"status\":\"$st\",\"result\":\"succeed\"}"
done
echo "{\"requests\":[{\"requestId\":\"$req\",\"status\":\"complete\",\"machines\":[$ms]}]}"
`,
	"requestReturnMachines.sh": `#!/bin/sh
. "$(dirname "$0")/alive.sh"
for h in $(grep -o '"name":"[^"]*"' "$2" | cut -d'"' -f4); do
	p=$(cat "@STATE@/w/$h.pid" 2>/dev/null) || continue
	kill -TERM "$p" 2>/dev/null
	i=0
	while alive "$p" && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
	alive "$p" && kill -KILL "$p"
	echo "$h" >> "@STATE@/returned"
done
echo "{\"requestId\":\"ret-$$\",\"message\":\"returned\"}"
`,
	"getReturnRequests.sh": `#!/bin/sh
echo '{"requests":[]}'
`,
	"getAvailableTemplates.sh": `#!/bin/sh
echo '{"templates":[{"templateId":"sc1","maxNumber":2,"attributes":{"ncpus":["Numeric","1"],"scripthost":["Boolean","1"]}}]}'
`,
	"alive.sh": `# alive PID: the process runs (a zombie does not).
alive() {
	[ -n "$1" ] && [ -r "/proc/$1/stat" ] && ! grep -q ') Z ' "/proc/$1/stat" 2>/dev/null
}
`,
}

// writeScripts writes a provider's scripts into dir, executable.
func writeScripts(t *testing.T, dir string, scripts map[string]string, repl *strings.Replacer) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(repl.Replace(text)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// The script provider through a real xced: LSF-style provider scripts
// start real workers, jobs run on them, and the hosts go back when idle;
// a provider whose requestMachines.sh fails and one whose script hangs
// past its timeout show their errors in badmin rc error and in the
// pending jobs' reasons, while bjobs, bsub and jobs on a static host go on.
func TestElasticScript(t *testing.T) {
	base, err := os.MkdirTemp("", "xce-rc-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	site, broken, stuck, state := filepath.Join(base, "site"), filepath.Join(base, "broken"), filepath.Join(base, "stuck"), filepath.Join(base, "state")
	m := newMulti(t, `default_queue = "normal"

[resources.scripthost]
type = "boolean"

[providers.site]
kind = "script"
script_dir = "`+site+`"

[providers.broken]
kind = "script"
script_dir = "`+broken+`"

[providers.stuck]
kind = "script"
script_dir = "`+stuck+`"
timeout = "2s"

[templates.sc1]
provider = "site"
max = 2
idle_time = "1s"
resources = { scripthost = true }

[templates.bad1]
provider = "broken"
max = 1
resources = { scripthost = true }

[templates.hang1]
provider = "stuck"
max = 1
resources = { scripthost = true }

[queues.normal]

[queues.cloud]
rc_hosts = ["sc1"]

[queues.badq]
rc_hosts = ["bad1"]

[queues.hangq]
rc_hosts = ["hang1"]
`)
	// Whatever a script started and did not stop ends with the test.
	t.Cleanup(func() {
		for _, w := range workersUnder(state) {
			if pid, err := strconv.Atoi(strings.Fields(w)[0]); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	repl := strings.NewReplacer("@STATE@", state, "@XCED@", filepath.Join(binDir, "xced"), "@ADDR@", m.addr,
		"@TOKEN@", filepath.Join(m.dir, "state", "cluster.token"))
	if err := os.MkdirAll(filepath.Join(state, "w"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeScripts(t, site, siteScripts, repl)
	// Both take back what they were asked for (nothing started).
	nothing := "#!/bin/sh\necho '{\"requestId\":\"ret-0\",\"message\":\"nothing to return\"}'\n"
	writeScripts(t, broken, map[string]string{"requestReturnMachines.sh": nothing,
		"requestMachines.sh": "#!/bin/sh\necho 'quota exceeded for template bad1' >&2\nexit 3\n"}, repl)
	writeScripts(t, stuck, map[string]string{"requestReturnMachines.sh": nothing,
		"requestMachines.sh": "#!/bin/sh\ntouch @STATE@/stuck.started\nsleep 600\n"}, repl)
	m.worker("hA", 1)
	m.waitHosts(map[string]string{"hA": "ok"})

	// Three jobs only sc1's hosts can take (select[scripthost]): two
	// hosts come up through requestMachines.sh, the jobs run there.
	var ids []string
	for range 3 {
		ids = append(ids, m.submit("sleep 1", "-q", "cloud", "-R", "select[scripthost]"))
	}
	hosts := map[string]bool{}
	for _, id := range ids {
		m.waitState(id, "DONE")
		hosts[m.execHosts(id)] = true
	}
	for h := range hosts {
		if !strings.HasPrefix(h, "sc1-") {
			t.Errorf("a cloud job ran on %s, not on an sc1 host\nxced:\n%s", h, m.log)
		}
	}
	if len(hosts) > 2 {
		t.Errorf("the jobs ran on %d hosts; sc1 has max = 2", len(hosts))
	}
	// Idle for idle_time, they go back through requestReturnMachines.sh.
	var out string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		out = m.run("", "bhosts", "-w").stdout
		if !strings.Contains(out, "sc1-") && len(workersUnder(state)) == 0 {
			break
		}
	}
	if strings.Contains(out, "sc1-") || len(workersUnder(state)) > 0 {
		t.Fatalf("the script provider's hosts were not returned:\nbhosts -w:\n%s\nworkers: %v\nxced:\n%s", out, workersUnder(state), m.log)
	}
	returned, _ := os.ReadFile(filepath.Join(state, "returned"))
	for h := range hosts {
		if !strings.Contains(string(returned), h) {
			t.Errorf("requestReturnMachines.sh was not asked to return %s (it returned %q)", h, returned)
		}
	}

	// A provider whose requestMachines.sh fails, and one whose script
	// hangs until its timeout kills it.
	bad := m.submit("sleep 1", "-q", "badq", "-R", "select[scripthost]")
	hang := m.submit("sleep 1", "-q", "hangq", "-R", "select[scripthost]")
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(state, "stuck.started")); err == nil {
			break
		}
	}
	// While it hangs, the commands and the static host go on.
	static := m.submit("true", "-q", "normal")
	m.waitState(static, "DONE")
	if h := m.execHosts(static); h != "hA" {
		t.Errorf("the static job ran on %q", h)
	}
	m.must("", "bjobs", "-u", "all", "-a")
	m.must("", "bqueues")

	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if ok() {
				return
			}
		}
		t.Fatalf("%s\nbadmin rc error:\n%s\nbjobs -p:\n%s\nxced:\n%s", what, m.run("", "badmin", "rc", "error").stdout,
			m.run("", "bjobs", "-p", "-u", "all").stdout, m.log)
	}
	waitFor("the failing script's error is not shown", func() bool {
		e := m.run("", "badmin", "rc", "error").stdout
		return strings.Contains(e, "quota exceeded for template bad1") && strings.Contains(e, "broken")
	})
	waitFor("the hanging script's timeout is not shown", func() bool {
		return strings.Contains(m.run("", "badmin", "rc", "error").stdout, "did not answer in time")
	})
	reason := func(id string) string { return m.run("", "bjobs", "-p", id).stdout }
	waitFor("the job of the failing provider does not say why it waits", func() bool {
		r := reason(bad)
		return strings.Contains(r, "its last request failed") && strings.Contains(r, "quota exceeded")
	})
	waitFor("the job of the hanging provider does not say why it waits", func() bool {
		r := reason(hang)
		return strings.Contains(r, "its last request failed") && strings.Contains(r, "did not answer in time")
	})
	if st := m.stat(bad) + " " + m.stat(hang); st != "PEND PEND" {
		t.Errorf("jobs of the failing providers: %s", st)
	}
	m.must("", "bkill", bad, hang)
}
