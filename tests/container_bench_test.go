package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"xce/lib/api"
)

// BenchmarkContainerJobs: start to end of 100 `true` jobs in the test's
// busybox image (podman, an application profile), beside the same 100
// without a container and podman's own `podman run --rm IMAGE true`
// (median of 5, one after another) as the limit a job in a container
// cannot beat. The jobs run 4 at a time (the cluster's slots), so the
// per-job figures are the batch's wall time over 100. Root and podman
// only.
func BenchmarkContainerJobs(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("podman's root store: needs root")
	}
	if _, err := exec.LookPath("podman"); err != nil {
		b.Skip("podman is not installed")
	}
	env := podmanEnv(b)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		b.Setenv(k, v) // for xced, bsub and so the jobs
	}
	conf := filepath.Join(b.TempDir(), "xce.toml")
	text := "[cluster]\nname = \"ctrbench\"\n\n[apps.box]\ncontainer = \"podman[image(" + podmanImages[0] + ")]\"\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		b.Fatal(err)
	}
	c := newBenchCluster(b, "--config", conf)
	const n = 100
	done := 0
	batch := func(args ...string) time.Duration {
		began := time.Now()
		for range n {
			c.submit(append(args, "-o", "out.%J", "true")...)
		}
		done += n
		for deadline := time.Now().Add(10 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
			cnt := c.count()
			if cnt[api.JobState_EXIT] > 0 {
				b.Fatalf("%d jobs ended EXIT\nxced log:\n%s", cnt[api.JobState_EXIT], c.logTail())
			}
			if cnt[api.JobState_DONE] >= done {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("the jobs did not end within 10 minutes: %v", cnt)
			}
		}
		return time.Since(began)
	}
	plain := batch()
	boxed := batch("-app", "box")
	runs := make([]time.Duration, 5)
	for i := range runs {
		began := time.Now()
		if r := podman(env, "run", "--rm", podmanImages[0], "true"); r.code != 0 {
			b.Fatalf("podman run: %s", r.stderr)
		}
		runs[i] = time.Since(began)
	}
	slices.Sort(runs)
	limit := runs[len(runs)/2]
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	report(b, fmt.Sprintf("%d true jobs, no container (ms/job)", n), ms(plain)/n, "ms/job", nil)
	report(b, "podman run --rm IMAGE true (ms, median of 5)", ms(limit), "ms/run", nil)
	report(b, fmt.Sprintf("%d true jobs in podman (ms/job; <=1.2x podman run)", n), ms(boxed)/n, "ms/ctrjob", atMost(1.2*ms(limit)))
}
