package tests

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"xce/lib/testenv"
)

// newGPUCluster starts the single-host default with the fake nvidia-smi
// (lib/gpu/testdata/bin) first on xced's PATH, describing a host with
// gpus GPUs ("0", "4" or "8").
func newGPUCluster(t *testing.T, gpus string, args ...string) *cluster {
	t.Helper()
	bin, err := filepath.Abs("../lib/gpu/testdata/bin")
	if err != nil {
		t.Fatal(err)
	}
	return newClusterEnv(t, []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "XCE_FAKE_GPUS=" + gpus}, args...)
}

// jobOutput waits for a job to finish and returns its -o file.
func (c *cluster) jobOutput(id, path string) string {
	c.t.Helper()
	c.waitState(id, "DONE", "EXIT")
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err == nil && len(b) > 0 || time.Now().After(deadline) {
			return string(b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// cvd is the CUDA_VISIBLE_DEVICES line a job printed.
func cvd(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, "CVD="); ok {
			return v
		}
	}
	return "(none)"
}

func TestGPUPlacement(t *testing.T) {
	c := newGPUCluster(t, "4")
	out := filepath.Join(c.work, "p.out")
	id := c.submit("", "-gpu", "num=2", "-o", out, "sh", "-c", "echo CVD=$CUDA_VISIBLE_DEVICES; echo ORDER=$CUDA_DEVICE_ORDER")
	got := c.jobOutput(id, out)
	if v := cvd(got); v != "0,1" {
		t.Errorf("CUDA_VISIBLE_DEVICES = %q, want 0,1\n%s", v, got)
	}
	if !strings.Contains(got, "ORDER=PCI_BUS_ID") {
		t.Errorf("no CUDA_DEVICE_ORDER=PCI_BUS_ID:\n%s", got)
	}
}

// waitFile waits until a job has written path and returns it.
func (c *cluster) waitFile(path string) string {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			return string(b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("%s was not written\nxced log:\n%s", path, c.log)
	return ""
}

// gpuJob submits a job that writes its CUDA_VISIBLE_DEVICES to a file
// and then sleeps; it returns the job ID and the file.
func (c *cluster) gpuJob(name, req string, args ...string) (id, file string) {
	c.t.Helper()
	file = filepath.Join(c.work, name+".cvd")
	argv := append([]string{"-gpu", req, "-o", "/dev/null"}, args...)
	argv = append(argv, "sh", "-c", "echo CVD=$CUDA_VISIBLE_DEVICES > "+file+"; exec sleep 120")
	return c.submit("", argv...), file
}

// pendReason is the job's pending reason as bjobs -p -o prints it.
func (c *cluster) pendReason(id string) string {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var s string
	for time.Now().Before(deadline) {
		s = strings.TrimSpace(c.must("", "bjobs", "-noheader", "-o", "pend_reason", id))
		if s != "" && s != "-" && !strings.Contains(s, "New job is waiting") {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	return s
}

func TestGPUExclusiveAndRelease(t *testing.T) {
	c := newGPUCluster(t, "4")
	a, fa := c.gpuJob("a", "num=2:mode=exclusive_process")
	b, fb := c.gpuJob("b", "num=2:j_exclusive=yes")
	ca, cb := cvd(c.waitFile(fa)), cvd(c.waitFile(fb))
	seen := map[string]bool{}
	for _, d := range strings.Split(ca+","+cb, ",") {
		if seen[d] {
			t.Fatalf("exclusive jobs share device %s: a %q, b %q", d, ca, cb)
		}
		seen[d] = true
	}
	if len(seen) != 4 {
		t.Fatalf("a %q, b %q: want 4 distinct devices", ca, cb)
	}
	// Every device is held exclusively: a shared job pends, saying why.
	p, fp := c.gpuJob("p", "num=1")
	why := c.pendReason(p)
	if !strings.Contains(why, "-gpu num=1") || !strings.Contains(why, "0/1 hosts") || !strings.Contains(why, "GPU") {
		t.Errorf("pending reason %q", why)
	}
	if got := c.must("", "bjobs", "-noheader", "-o", "gpu_num gpu_mode j_exclusive gpu_alloc delimiter=';'", a); !strings.HasPrefix(got, "2;exclusive_process;yes;") ||
		!strings.Contains(got, "/"+ca) {
		t.Errorf("bjobs -o gpu fields of %s: %q (devices %s)", a, got, ca)
	}
	long := regexp.MustCompile(`\n {21,}`).ReplaceAllString(c.must("", "bjobs", "-l", a), "") // unfolded
	for _, want := range []string{"Requested GPU <num=2:mode=exclusive_process>", "GPU REQUIREMENT DETAILS:",
		" Combined: num=2:mode=exclusive_process:mps=no:j_exclusive=yes", "GPU_ALLOCATION:"} {
		if !strings.Contains(normalize(long), want) {
			t.Errorf("bjobs -l lacks %q:\n%s", want, long)
		}
	}
	// bkill releases a's devices: the pending job gets one of them.
	c.must("", "bkill", a)
	c.waitState(a, "EXIT")
	got := cvd(c.waitFile(fp))
	if !strings.Contains(ca, got) || got == "" {
		t.Errorf("after bkill of %s (devices %s) the pending job got %q", a, ca, got)
	}
	// A job that exits releases its devices too.
	c.must("", "bkill", b)
	c.waitState(b, "EXIT")
	e := filepath.Join(c.work, "e.out")
	id := c.submit("", "-gpu", "num=3:j_exclusive=yes", "-o", e, "sh", "-c", "echo CVD=$CUDA_VISIBLE_DEVICES")
	if v := cvd(c.jobOutput(id, e)); len(strings.Split(v, ",")) != 3 {
		t.Errorf("num=3 after the release got %q", v)
	}
	c.must("", "bkill", p)
}

func TestGPUModelAndMemory(t *testing.T) {
	c := newGPUCluster(t, "4") // 0,1: Tesla V100-SXM2-16GB (16160 MB); 2,3: Tesla T4 (15360 MB)
	run := func(name, req string) string {
		out := filepath.Join(c.work, name+".out")
		id := c.submit("", "-gpu", req, "-o", out, "sh", "-c", "echo CVD=$CUDA_VISIBLE_DEVICES")
		return cvd(c.jobOutput(id, out))
	}
	if v := run("t4", "num=2:gmodel=T4"); v != "2,3" {
		t.Errorf("gmodel=T4 got %q, want 2,3", v)
	}
	if v := run("v100", "num=1:gmodel=TeslaV100_SXM2_16GB"); v != "0" {
		t.Errorf("gmodel=TeslaV100_SXM2_16GB got %q, want 0", v)
	}
	// gmem: a device offers its total less what the driver reports used
	// (the fake: index*1000+5 MB): 14000 MB fits the V100s only.
	if v := run("gmem", "num=2:gmem=14000M"); v != "0,1" {
		t.Errorf("gmem=14000M got %q, want 0,1", v)
	}
	if v := run("gmemt4", "num=2:gmem=12000M:gmodel=T4"); v != "2,3" {
		t.Errorf("gmem=12000M:gmodel=T4 got %q, want 2,3", v)
	}
	// Not possible on this host: accepted, as LSF accepts it (a host may
	// bring the GPUs), pending with the GPU reason.
	for _, req := range []string{"num=1:gmodel=A100", "num=5", "num=3:gmodel=T4", "num=1:gmem=20G"} {
		id := c.submit("", "-gpu", req, "true")
		if why := c.pendReason(id); !strings.Contains(why, "-gpu ") || !strings.Contains(why, "0/1 hosts") {
			t.Errorf("bsub -gpu %s: pending reason %q", req, why)
		}
		c.must("", "bkill", id)
	}
	// bmod takes what bsub takes, and refuses what it refuses.
	held := c.submit("", "-H", "true")
	c.must("", "bmod", "-gpu", "num=9", held)
	if r := c.run("", "bmod", "-gpu", "num=x", held); r.code == 0 || !strings.Contains(r.stdout+r.stderr, "Bad GPU requirement") {
		t.Errorf("bmod -gpu num=x: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	c.must("", "bmod", "-gpu", "num=4", held)
	c.must("", "bkill", held)
	// rusage[ngpus_physical=N] asks for N shared GPUs.
	out := filepath.Join(c.work, "ru.out")
	id := c.submit("", "-R", "rusage[ngpus_physical=2]", "-o", out, "sh", "-c", "echo CVD=$CUDA_VISIBLE_DEVICES")
	if v := cvd(c.jobOutput(id, out)); len(strings.Split(v, ",")) != 2 {
		t.Errorf("rusage[ngpus_physical=2] got %q", v)
	}
}

func TestGPUNoDevices(t *testing.T) {
	c := newGPUCluster(t, "0")
	// A real GPU job script is accepted and pends: no GPU here now.
	id := c.submit("#!/bin/sh\n#BSUB -gpu \"num=1:mode=exclusive_process\"\n#BSUB -o /dev/null\nnvidia-smi\n")
	if why := c.pendReason(id); !strings.Contains(why, "-gpu num=1") || !strings.Contains(why, "no GPUs") {
		t.Errorf("bsub -gpu on a host without GPUs: pending reason %q", why)
	}
	c.must("", "bkill", id)
	if got := c.must("", "bhosts", "-gpu"); strings.Count(got, "\n") != 1 {
		t.Errorf("bhosts -gpu without GPUs:\n%s", got)
	}
	if got := c.must("", "lshosts", "-w"); !strings.Contains(got, "HOST_NAME") {
		t.Errorf("lshosts:\n%s", got)
	}
	// A plain job still runs.
	id = c.submit("", "true")
	c.waitState(id, "DONE")
}

// TestGPURestart: a running job's devices stay held across a controller
// crash (kill -9) and restart.
func TestGPURestart(t *testing.T) {
	c := newGPUCluster(t, "4")
	a, fa := c.gpuJob("a", "num=3:j_exclusive=yes")
	ca := cvd(c.waitFile(fa))
	c.crash()
	c.start()
	c.waitState(a, "RUN")
	b, fb := c.gpuJob("b", "num=1:j_exclusive=yes")
	cb := cvd(c.waitFile(fb))
	if strings.Contains(ca, cb) {
		t.Fatalf("after the restart job %s got device %s, held by %s (%s)", b, cb, a, ca)
	}
	p, _ := c.gpuJob("p", "num=1")
	if why := c.pendReason(p); !strings.Contains(why, "0/1 hosts") {
		t.Errorf("pending reason after the restart: %q", why)
	}
	got := c.must("", "bhosts", "-gpu")
	if strings.Count(got, "      1      1      0      0\n") != 4 {
		t.Errorf("bhosts -gpu after the restart: want 4 devices with 1 job each:\n%s", got)
	}
}

// maskHost replaces the host name at the start of lines by HOST, padded
// to the width of the name and the blanks after it, so that the columns
// stay where they were.
func maskHost(s string) string {
	host, _ := os.Hostname()
	if i := strings.IndexByte(host, '.'); i > 0 {
		host = host[:i]
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		for _, h := range []string{host, host[:min(len(host), 10)]} {
			if rest, ok := strings.CutPrefix(l, h); ok && (rest == "" || rest[0] == ' ') {
				trimmed := strings.TrimLeft(rest, " ")
				width := len(h) + len(rest) - len(trimmed)
				lines[i] = fmt.Sprintf("%-*s", max(width, 5), "HOST ") + trimmed
				break
			}
		}
	}
	return strings.Join(lines, "\n")
}

func TestGPUViews(t *testing.T) {
	c := newGPUCluster(t, "8")
	_, f := c.gpuJob("a", "num=2:gmem=4G:gmodel=V100")
	c.waitFile(f)
	golden(t, "gpu_bhosts", maskHost(c.must("", "bhosts", "-gpu")))
	golden(t, "gpu_lshosts", maskHost(c.must("", "lshosts", "-gpu")))
	golden(t, "gpu_lsload", maskHost(c.must("", "lsload", "-gpu")))
	if got := strings.TrimSpace(c.must("", "bhosts", "-noheader", "-o", "ngpus ngpus_alloc ngpus_excl_alloc ngpus_excl_avail ngpus_shared_avail delimiter=';'")); got != "8;2;0;6;8" {
		t.Errorf("bhosts -o ngpus fields: %q, want 8;2;0;6;8", got)
	}
	long := c.must("", "bhosts", "-l", "-gpu")
	for _, want := range []string{"GPU STATIC ATTRIBUTES:", "TeslaV100_SXM2_32GB", "GPU DYNAMIC ATTRIBUTES:", "Exclusive_Process", "GPU JOB INFORMATION:"} {
		if !strings.Contains(long, want) {
			t.Errorf("bhosts -l -gpu lacks %q:\n%s", want, long)
		}
	}
	// select[] and order[] see the GPU resources.
	if got := c.must("", "lshosts", "-R", "select[ngpus==8 && gpu_model0==NVIDIAA100_SXM4_80GB]"); !strings.Contains(got, "HOST_NAME") || strings.Count(got, "\n") != 2 {
		t.Errorf("lshosts -R on GPU resources:\n%s", got)
	}
	out := filepath.Join(c.work, "sel.out")
	id := c.submit("", "-R", "select[gpu_maxmem>80000] order[gpu_ut0]", "-o", out, "true")
	c.waitState(id, "DONE")
	for _, args := range [][]string{{"-gpu", "-w"}, {"-gpu", "-o", "host_name"}} {
		if r := c.run("", "bhosts", args...); r.code != 255 {
			t.Errorf("bhosts %v: exit %d", args, r.code)
		}
	}
}

// TestGPUConfig: the cluster's, the queue's and a fixed profile's
// gpu_req, and a project's GPU quota.
func TestGPUConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "xce.toml")
	conf := `
[cluster]
default_queue = "normal"
gpu_req = "gmodel=T4"

[queues.normal]
[queues.gpu]
gpu_req = "num=2:j_exclusive=yes"

[apps.one]
gpu_req = "num=1:mode=exclusive_process"
fixed = ["gpu_req"]

[projects.small]
max_gpus = 1
`
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newGPUCluster(t, "4", "--config", path)
	// The queue's num and j_exclusive, the cluster's gmodel: the two T4s.
	q, fq := c.gpuJob("q", "-", "-q", "gpu")
	if v := cvd(c.waitFile(fq)); v != "2,3" {
		t.Errorf("queue gpu job got %q, want 2,3", v)
	}
	if got := c.must("", "bqueues", "-l", "gpu"); !strings.Contains(got, "GPU_REQ:  num=2:j_exclusive=yes") {
		t.Errorf("bqueues -l lacks GPU_REQ:\n%s", got)
	}
	long := regexp.MustCompile(`\n {21,}`).ReplaceAllString(c.must("", "bjobs", "-l", q), "")
	if !strings.Contains(long, "gpu            num=2:mode=shared:mps=no:j_exclusive=yes:gmodel=T4") || !strings.Contains(long, "queue gpu + default") {
		t.Errorf("bjobs -l EFFECTIVE SETTINGS lack the gpu row:\n%s", long)
	}
	r := c.run("", "bsub", "-app", "one", "-gpu", "num=2", "true")
	if r.code == 0 || !strings.Contains(r.stderr, "application profile one fixes num=1") {
		t.Errorf("bsub against a fixed gpu_req: exit %d, %q", r.code, r.stderr)
	}
	r = c.run("", "bsub", "-P", "small", "-gpu", "num=2", "true")
	if r.code == 0 || !strings.Contains(r.stderr, "project small allows at most 1") {
		t.Errorf("bsub over the project quota: exit %d, %q", r.code, r.stderr)
	}
	// The quota holds the second job of the project while the first runs.
	_, fa := c.gpuJob("a", "num=1:gmodel=V100", "-P", "small")
	c.waitFile(fa)
	b, _ := c.gpuJob("b", "num=1:gmodel=V100", "-P", "small")
	if why := c.pendReason(b); !strings.Contains(why, "Project small has reached its quota of 1 GPU") {
		t.Errorf("pending reason under the quota: %q", why)
	}
}

// TestGPUWorkers: three hosts, the controller's own without GPUs and two
// `xced worker`s whose fake nvidia-smi reports 4 and 8: each worker's
// GPUs reach the controller, jobs go where their model is, and what no
// host of the configured set has is refused.
func TestGPUWorkers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	path := filepath.Join(t.TempDir(), "xce.toml")
	if err := os.WriteFile(path, []byte("[hosts.g4]\n[hosts.g8]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newGPUCluster(t, "0", "--listen", addr, "--config", path)
	bin, _ := filepath.Abs("../lib/gpu/testdata/bin")
	for _, w := range []struct{ name, gpus string }{{"g4", "4"}, {"g8", "8"}} {
		cmd := exec.Command(filepath.Join(binDir, "xced"), "worker", "--controller", addr, "--name", w.name, "--slots", "4",
			"--token-file", filepath.Join(c.dir, "state", "cluster.token"), "--dir", filepath.Join(c.dir, "worker-"+w.name))
		parent := "xce-e2e-" + filepath.Base(c.dir) + "-" + w.name
		t.Cleanup(func() { testenv.RemoveCgroupTree(parent) })
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "XCE_FAKE_GPUS="+w.gpus, "XCE_CGROUP_PARENT="+parent)
		var log bytes.Buffer
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
			if t.Failed() {
				t.Logf("worker %s:\n%s", w.name, log.String())
			}
		})
	}
	deadline := time.Now().Add(30 * time.Second)
	var got string
	for time.Now().Before(deadline) {
		got = c.must("", "bhosts", "-gpu")
		if strings.Count(got, "\n") == 13 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(got, "\ng4 ") || !strings.Contains(got, "\ng8 ") || strings.Count(got, "\n") != 13 {
		t.Fatalf("bhosts -gpu: want g4's 4 and g8's 8 devices:\n%s\nxced log:\n%s", got, c.log)
	}
	id, _ := c.gpuJob("a100", "num=2:gmodel=A100")
	c.waitState(id, "RUN")
	if h := strings.TrimSpace(c.must("", "bjobs", "-noheader", "-o", "exec_host gpu_alloc delimiter=';'", id)); h != "g8;g8/0,1" {
		t.Errorf("gmodel=A100 job: %q, want g8;g8/0,1", h)
	}
	id, _ = c.gpuJob("t4", "num=2:gmodel=T4")
	c.waitState(id, "RUN")
	if h := strings.TrimSpace(c.must("", "bjobs", "-noheader", "-o", "exec_host gpu_alloc delimiter=';'", id)); h != "g4;g4/2,3" {
		t.Errorf("gmodel=T4 job: %q, want g4;g4/2,3", h)
	}
	nine, _ := c.gpuJob("nine", "num=9")
	if why := c.pendReason(nine); !strings.Contains(why, "-gpu num=9") {
		t.Errorf("bsub -gpu num=9 with hosts of 0, 4 and 8: pending reason %q", why)
	}
	c.must("", "bkill", nine)
	// Six shared GPUs fit only g8, which has 6 left.
	id, _ = c.gpuJob("six", "num=6")
	c.waitState(id, "RUN")
	if h := strings.TrimSpace(c.must("", "bjobs", "-noheader", "-o", "exec_host", id)); h != "g8" {
		t.Errorf("num=6 job on %q, want g8", h)
	}
}
