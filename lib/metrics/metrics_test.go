package metrics

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"xce/lib/agent"
)

// TestEndpoints: /metrics parses with Prometheus' own parser, /healthz
// answers, /readyz follows the readiness function.
func TestEndpoints(t *testing.T) {
	reg := New()
	NewController(reg) // no controller yet: a standby's view
	NewWorker(reg, &agent.Probe{})
	ready := false
	reg.SetReady(func() (bool, string) { return ready, "standing by" })
	srv := httptest.NewServer(reg.Handler())
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("/healthz %d", code)
	}
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, "standing by") {
		t.Errorf("/readyz before ready: %d %q", code, body)
	}
	ready = true
	if code, _ := get("/readyz"); code != 200 {
		t.Errorf("/readyz when ready: %d", code)
	}
	code, body := get("/metrics")
	if code != 200 {
		t.Fatalf("/metrics %d", code)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"xce_build_info", "xce_controller_leader", "xce_worker_connected", "xce_process_cpu_seconds_total"} {
		if fams[name] == nil {
			t.Errorf("no %s", name)
		}
	}
}

func TestSplitMethod(t *testing.T) {
	if s, m := splitMethod("/xce.api.v1.Controller/Submit"); s != "Controller" || m != "Submit" {
		t.Errorf("%s %s", s, m)
	}
	m := NewRPC(New())
	m.Observe("/xce.api.v1.Cluster/Connect", errors.New("x"), time.Second)
}

// TestDashboardNames: every xce_ metric the Grafana dashboard queries
// exists.
func TestDashboardNames(t *testing.T) {
	b, err := os.ReadFile("../../docs/grafana/xce.json")
	if err != nil {
		t.Fatal(err)
	}
	reg := New()
	NewController(reg).RPC.Observe("/xce.api.v1.Controller/Submit", nil, time.Millisecond)
	NewWorker(reg, &agent.Probe{})
	known := map[string]bool{}
	ch := make(chan *prometheus.Desc, 256)
	go func() {
		for _, c := range []prometheus.Collector{NewController(New()), NewWorker(New(), &agent.Probe{})} {
			c.Describe(ch)
		}
		close(ch)
	}()
	fq := regexp.MustCompile(`fqName: "([^"]+)"`)
	for d := range ch {
		if m := fq.FindStringSubmatch(d.String()); m != nil {
			known[m[1]] = true
		}
	}
	fams, err := reg.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		known[f.GetName()] = true
	}
	for _, name := range regexp.MustCompile(`xce_[a-z_]+`).FindAllString(string(b), -1) {
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
		if !known[name] && !known[base] {
			t.Errorf("the dashboard queries %s, which no collector has", name)
		}
	}
}
