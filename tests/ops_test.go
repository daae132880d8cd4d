package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Operations (issue 35): metrics, badmin perfmon, -V and log formats.

// scrape reads http://addr/metrics with the Prometheus client library's
// text parser, failing the test on any error or invalid name.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	for name, f := range fams {
		if !model.LegacyValidation.IsValidMetricName(name) {
			t.Errorf("invalid metric name %q", name)
		}
		if f.GetType() == dto.MetricType_COUNTER && !strings.HasSuffix(name, "_total") {
			t.Errorf("counter %s does not end in _total", name)
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if !model.LegacyValidation.IsValidLabelName(l.GetName()) {
					t.Errorf("%s: invalid label name %q", name, l.GetName())
				}
			}
		}
	}
	return fams
}

func httpStatus(addr, path string) int {
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// TestMetricsScrape: the job counts xce_jobs gives are bjobs -a -u all's.
func TestMetricsScrape(t *testing.T) {
	addr := freePort(t)
	c := newCluster(t, "--metrics", addr)
	var ids []string
	for range 3 {
		ids = append(ids, c.submit("", "-o", "/dev/null", "true"))
	}
	ids = append(ids, c.submit("", "-o", "/dev/null", "exit 3"))
	for _, id := range ids {
		c.waitState(id, "DONE", "EXIT")
	}
	run := c.submit("", "-o", "/dev/null", "sleep 600")
	c.waitState(run, "RUN")
	c.submit("", "-H", "-o", "/dev/null", "true")
	c.submit("", "-H", "-q", "normal", "-o", "/dev/null", "true")

	if s := httpStatus(addr, "/healthz"); s != 200 {
		t.Errorf("/healthz: %d", s)
	}
	if s := httpStatus(addr, "/readyz"); s != 200 {
		t.Errorf("/readyz: %d", s)
	}
	fams := scrape(t, addr)
	got := map[string]int{}
	for _, m := range fams["xce_jobs"].GetMetric() {
		if n := int(m.GetGauge().GetValue()); n > 0 {
			got[label(m, "queue")+" "+label(m, "state")] += n
		}
	}
	want := map[string]int{}
	out := c.must("", "bjobs", "-a", "-u", "all", "-noheader", "-o", "queue stat")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		want[f[0]+" "+f[1]]++
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("xce_jobs %v, bjobs -a -u all %v", got, want)
	}
	if n := fams["xce_jobs_submitted_total"].GetMetric()[0].GetCounter().GetValue(); n != 7 {
		t.Errorf("xce_jobs_submitted_total %v, want 7", n)
	}
	fin := map[string]float64{}
	for _, m := range fams["xce_jobs_finished_total"].GetMetric() {
		fin[label(m, "state")] = m.GetCounter().GetValue()
	}
	if fin["DONE"] != 3 || fin["EXIT"] != 1 {
		t.Errorf("xce_jobs_finished_total %v", fin)
	}
	bi := fams["xce_build_info"].GetMetric()
	if len(bi) != 1 || label(bi[0], "version") != testRelease || label(bi[0], "revision") == "" {
		t.Errorf("xce_build_info %v", bi)
	}
	for _, name := range []string{"xce_scheduler_cycle_seconds", "xce_rpc_request_duration_seconds", "xce_rpc_requests_total",
		"xce_store_commit_duration_seconds", "xce_store_size_bytes", "xce_hosts", "xce_slots", "xce_host_slots",
		"xce_user_slots", "xce_controller_leader"} {
		if fams[name] == nil {
			t.Errorf("no %s", name)
		}
	}
	if v := fams["xce_controller_leader"].GetMetric()[0].GetGauge().GetValue(); v != 1 {
		t.Errorf("xce_controller_leader %v", v)
	}
}

// TestPerfmonBurst: badmin perfmon counts a burst of submissions.
func TestPerfmonBurst(t *testing.T) {
	c := newCluster(t)
	if out := c.must("", "badmin", "perfmon", "view"); !strings.Contains(out, "not been started") {
		t.Errorf("view before start: %q", out)
	}
	if out := c.must("", "badmin", "perfmon", "start", "3600"); !strings.Contains(out, "3600 seconds") {
		t.Errorf("start: %q", out)
	}
	const burst = 12
	for range burst {
		c.submit("", "-H", "-o", "/dev/null", "true")
	}
	c.must("", "bjobs", "-u", "all")
	c.must("", "bhosts")
	var v struct {
		Running bool `json:"running"`
		Period  int  `json:"sample_period_seconds"`
		Metrics map[string]struct {
			Total int64 `json:"total"`
		} `json:"metrics"`
	}
	out := c.must("", "badmin", "perfmon", "view", "-json")
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("view -json: %v\n%s", err, out)
	}
	if !v.Running || v.Period != 3600 {
		t.Errorf("view -json: %s", out)
	}
	for key, want := range map[string]int64{"jobs_submitted": burst, "submission_requests": burst, "job_queries": 1, "host_queries": 1} {
		if got := v.Metrics[key].Total; got != want {
			t.Errorf("%s total %d, want %d", key, got, want)
		}
	}
	// Every call counts once it has ended: the start, the burst, bjobs's
	// and bhosts's (the view's own is still running).
	if got := v.Metrics["requests"].Total; got < burst+3 {
		t.Errorf("requests total %d, want at least %d", got, burst+3)
	}
	text := c.must("", "badmin", "perfmon", "view")
	if !strings.Contains(text, "Sample period :                  3600 Seconds") || !regexpLine(text, `^Jobs submitted\s+0\s+0\s+0\s+0\s+12$`) {
		t.Errorf("view:\n%s", text)
	}
	if out := c.must("", "badmin", "perfmon", "setperiod", "60"); !strings.Contains(out, "60 seconds") {
		t.Errorf("setperiod: %q", out)
	}
	if r := c.run("", "badmin", "perfmon", "setperiod"); r.code != 255 || !strings.Contains(r.stderr, "Usage:") {
		t.Errorf("setperiod without a period: exit %d %q", r.code, r.stderr)
	}
	c.must("", "badmin", "perfmon", "stop")
	if out := c.must("", "badmin", "perfmon", "view"); !strings.Contains(out, "not been started") {
		t.Errorf("view after stop: %q", out)
	}
}

func regexpLine(text, re string) bool {
	for _, line := range strings.Split(text, "\n") {
		if regexp.MustCompile(re).MatchString(line) {
			return true
		}
	}
	return false
}

// TestVersionFlag: every command's -V prints the build's release on
// stderr, as LSF's do; xced --version prints it too.
func TestVersionFlag(t *testing.T) {
	prefix := "XCE " + testRelease + ", revision "
	for _, name := range commands {
		out, err := exec.Command(filepath.Join(binDir, name), "-V").CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), prefix) {
			t.Errorf("%s -V: %v %q", name, err, out)
		}
		cmd := exec.Command(filepath.Join(binDir, name), "-V")
		var stdout strings.Builder
		cmd.Stdout = &stdout
		cmd.Run()
		if stdout.Len() != 0 {
			t.Errorf("%s -V wrote %q on stdout; LSF writes the version on stderr", name, stdout.String())
		}
	}
	for _, arg := range []string{"--version", "-V"} {
		out, err := exec.Command(filepath.Join(binDir, "xced"), arg).Output()
		if err != nil || !strings.HasPrefix(string(out), prefix) {
			t.Errorf("xced %s: %v %q", arg, err, out)
		}
	}
}

// TestLogFormatJSON: xced --log-format json writes one JSON object a
// line; the plain line that tells the socket stays for people.
func TestLogFormatJSON(t *testing.T) {
	c := newCluster(t, "--log-format", "json", "--log-level", "debug")
	c.submit("", "-o", "/dev/null", "true")
	c.stop()
	var ready bool
	for _, line := range strings.Split(strings.TrimSpace(c.log.String()), "\n") {
		if strings.HasPrefix(line, "xced: ") {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("not JSON: %q", line)
			continue
		}
		if m["time"] == nil || m["level"] == nil {
			t.Errorf("no time or level: %q", line)
		}
		ready = ready || m["msg"] == "xced ready"
	}
	if !ready {
		t.Errorf("no xced ready line:\n%s", c.log)
	}
	r, err := exec.Command(filepath.Join(binDir, "xced"), "--log-format", "xml", "--dir", t.TempDir()).CombinedOutput()
	if err == nil || !strings.Contains(string(r), "use text or json") {
		t.Errorf("--log-format xml: %v %q", err, r)
	}
}

// TestHAReadyzFlips: /readyz answers 200 on the leader only, and moves
// with the leadership when the leader goes.
func TestHAReadyzFlips(t *testing.T) {
	var ports []string
	h := newHAArgs(t, 3, func(i int) []string {
		for len(ports) <= i {
			ports = append(ports, freePort(t))
		}
		return []string{"--metrics", ports[i]}
	})
	// The commands take their credential from the first worker's socket;
	// without one they would use the first candidate's, gone when that
	// candidate is the leader this test kills.
	h.worker("hA", 1)
	l := h.leader()
	waitReady := func(leader int) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			ok := true
			for i, c := range h.cands {
				if c.cmd == nil {
					continue
				}
				want := 503
				if i == leader {
					want = 200
				}
				ok = ok && httpStatus(ports[i], "/readyz") == want && httpStatus(ports[i], "/healthz") == 200
			}
			if ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("/readyz does not follow the leader %d\n%s", leader, h.logs())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitReady(l)
	standby := (l + 1) % 3
	fams := scrape(t, ports[standby])
	if v := fams["xce_controller_leader"].GetMetric()[0].GetGauge().GetValue(); v != 0 {
		t.Errorf("standby's xce_controller_leader %v", v)
	}
	roles := map[string]float64{}
	for _, m := range fams["xce_raft_state"].GetMetric() {
		roles[label(m, "role")] = m.GetGauge().GetValue()
	}
	if roles["Follower"] != 1 || roles["Leader"] != 0 || fams["xce_raft_term"] == nil || fams["xce_raft_commit_index"] == nil {
		t.Errorf("standby's raft metrics: %v", roles)
	}
	if fams["xce_jobs"] != nil {
		t.Errorf("a standby reports jobs")
	}
	h.cands[l].crash()
	deadline := time.Now().Add(30 * time.Second)
	next := h.leader()
	for next == l && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		next = h.leader()
	}
	if next == l {
		t.Fatalf("no new leader\n%s", h.logs())
	}
	waitReady(next)
}

// TestWorkerMetrics: xced worker --metrics reports the worker's jobs, and
// its /readyz says whether it has the controller.
func TestWorkerMetrics(t *testing.T) {
	m := newMulti(t)
	addr := freePort(t)
	w := &workerProc{t: t, name: "hA", dir: filepath.Join(m.dir, "w-hA"), slots: 2, addr: m.addr,
		token: filepath.Join(m.dir, "state", "cluster.token"), args: []string{"--metrics", addr}}
	m.workers["hA"] = w
	w.start()
	m.waitHosts(map[string]string{"hA": "ok"})
	id := m.submit("", "-o", "/dev/null", "sleep 600")
	m.waitStarted(id)
	deadline := time.Now().Add(30 * time.Second)
	for {
		fams := scrape(t, addr)
		g := func(name string) float64 {
			if f := fams[name]; f != nil && len(f.GetMetric()) == 1 {
				return f.GetMetric()[0].GetGauge().GetValue()
			}
			return -1
		}
		if g("xce_worker_connected") == 1 && g("xce_worker_jobs") == 1 && g("xce_worker_slots") == 2 && httpStatus(addr, "/readyz") == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("worker metrics: connected %v, jobs %v, slots %v", g("xce_worker_connected"), g("xce_worker_jobs"), g("xce_worker_slots"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
