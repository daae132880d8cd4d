package gpu

import (
	"context"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"xce/lib/resreq"
	"xce/lib/sched"
)

// fakeHost puts the fake nvidia-smi (testdata/bin) first on PATH,
// describing a host with gpus GPUs ("0", "4", "8", "hang", "fail").
func fakeHost(t *testing.T, gpus string) {
	t.Helper()
	bin, err := filepath.Abs("testdata/bin")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	t.Setenv("XCE_FAKE_GPUS", gpus)
}

func detectFake(t *testing.T, gpus string) Inventory {
	t.Helper()
	fakeHost(t, gpus)
	inv, err := Detect(context.Background(), Options{SkipNVML: true})
	if err != nil {
		t.Fatalf("Detect on a %s-GPU host: %v", gpus, err)
	}
	return inv
}

func TestDetectFakeHosts(t *testing.T) {
	inv := detectFake(t, "4")
	if inv.Source != "nvidia-smi" || inv.Driver != "550.54.15" || len(inv.Devices) != 4 {
		t.Fatalf("4-GPU host: %+v", inv)
	}
	want := Device{Index: 2, UUID: "GPU-00000002-fake-4e3b-9c1a-000000000004", Name: "Tesla T4",
		MemTotalMB: 15360, MemUsedMB: 2005, UtilPct: 20, MemUtilPct: -1, TempC: 32, ComputeMode: "Default", PState: "P0"}
	if !reflect.DeepEqual(inv.Devices[2], want) {
		t.Errorf("device 2:\n got %+v\nwant %+v", inv.Devices[2], want)
	}
	if m := inv.Devices[0].Model(); m != "TeslaV100_SXM2_16GB" {
		t.Errorf("model %q", m)
	}

	inv = detectFake(t, "8")
	if len(inv.Devices) != 8 || inv.Devices[3].MIG != "Enabled" || inv.Devices[0].MIG != "Disabled" ||
		inv.Devices[5].MIG != "" || inv.Devices[7].ComputeMode != "Exclusive_Process" || inv.Devices[6].MemTotalMB != 32510 {
		t.Errorf("8-GPU host: %+v", inv.Devices)
	}

	inv = detectFake(t, "0")
	if inv.Source != "nvidia-smi" || len(inv.Devices) != 0 {
		t.Errorf("0-GPU host: %+v", inv)
	}
}

// TestDetectFallback runs the whole chain: NVML (absent on a host without
// the driver: no error), then the nvidia-smi on PATH.
func TestDetectFallback(t *testing.T) {
	fakeHost(t, "8")
	inv, err := Detect(context.Background(), Options{})
	if inv.Source == "nvml" {
		t.Skip("NVML answered: this host has an NVIDIA driver (TestNVMLMatchesSMI compares them)")
	}
	if err != nil || inv.Source != "nvidia-smi" || len(inv.Devices) != 8 {
		t.Fatalf("got %+v, %v", inv, err)
	}
}

func TestDetectNoGPU(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	inv, err := Detect(context.Background(), Options{})
	if inv.Source == "nvml" {
		t.Skip("NVML answered: this host has an NVIDIA driver")
	}
	if err != nil || inv.Source != "none" || len(inv.Devices) != 0 {
		t.Fatalf("no nvidia-smi: %+v, %v", inv, err)
	}
	if s := inv.Static(); len(s) != 2 || s[0] != (Value{Name: "ngpus"}) || s[1] != (Value{Name: "ngpus_physical"}) {
		t.Errorf("static values of a host without GPUs: %+v", s)
	}
}

func TestDetectBrokenSMI(t *testing.T) {
	fakeHost(t, "fail")
	inv, err := Detect(context.Background(), Options{SkipNVML: true})
	if err == nil || !strings.Contains(err.Error(), "couldn't communicate with the NVIDIA driver") || inv.Source != "none" {
		t.Errorf("failing nvidia-smi: %+v, %v", inv, err)
	}
	fakeHost(t, "hang")
	inv, err = Detect(context.Background(), Options{SkipNVML: true, Timeout: 200 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "no answer within 200ms") || inv.Source != "none" || len(inv.Devices) != 0 {
		t.Errorf("hung nvidia-smi: %+v, %v", inv, err)
	}
}

func TestParseSMI(t *testing.T) {
	fields := []string{"index", "name", "memory.total", "memory.used", "utilization.gpu", "temperature.gpu", "mig.mode.current"}
	out := "index, name, memory.total [MiB], memory.used [MiB], utilization.gpu [%], temperature.gpu, mig.mode.current\n" +
		"  0 ,  NVIDIA H100 80GB HBM3 , 81559 MiB, 1 MiB, 0 %, 31, Disabled \n\n" +
		"1, NVIDIA H100 80GB HBM3, [N/A], [Not Supported], [Unknown Error], 33.0, [N/A]\n"
	inv, err := ParseSMI(out, fields)
	if err != nil {
		t.Fatal(err)
	}
	want := []Device{
		{Index: 0, Name: "NVIDIA H100 80GB HBM3", MemTotalMB: 81559, MemUsedMB: 1, UtilPct: 0, MemUtilPct: -1, TempC: 31, MIG: "Disabled"},
		{Index: 1, Name: "NVIDIA H100 80GB HBM3", MemTotalMB: -1, MemUsedMB: -1, UtilPct: -1, MemUtilPct: -1, TempC: 33},
	}
	if !reflect.DeepEqual(inv.Devices, want) {
		t.Errorf("got  %+v\nwant %+v", inv.Devices, want)
	}
	if _, err := ParseSMI("0, Tesla T4\n", fields); err == nil || !strings.Contains(err.Error(), "line 1: 2 fields, expected 7") {
		t.Errorf("short line: %v", err)
	}
	if _, err := ParseSMI("x, a, 1, 1, 1, 1, a\n", fields); err == nil {
		t.Error("a bad index was accepted")
	}
}

func TestModelNames(t *testing.T) {
	for _, c := range []struct {
		vendor, lsf string
		yes, no     []string
	}{
		{"Tesla C2050 / C2070", "TeslaC2050_C2070", []string{"TeslaC2050_C2070", "Tesla", "C2050", "c2070"}, []string{"C205"}},
		{"Tesla V100-SXM2-16GB", "TeslaV100_SXM2_16GB", []string{"V100", "TeslaV100", "Tesla", "V100_SXM2_16GB", "teslav100_sxm2_16gb"}, []string{"V10", "A100", "SXM2"}},
		{"NVIDIA H100 80GB HBM3", "NVIDIAH10080GBHBM3", []string{"H100", "NVIDIAH100", "NVIDIA", "H10080GBHBM3"}, []string{"H10", "H1008"}},
		{"NVIDIA GeForce RTX 3090", "NVIDIAGeForceRTX3090", []string{"RTX3090", "GeForceRTX3090", "GeForce"}, []string{"3090X"}},
	} {
		if got := ModelName(c.vendor); got != c.lsf {
			t.Errorf("ModelName(%q) = %q, want %q", c.vendor, got, c.lsf)
		}
		for _, y := range c.yes {
			if !ModelMatches(c.vendor, y) {
				t.Errorf("gmodel=%s does not select %q (%v)", y, c.vendor, ModelNames(c.vendor))
			}
		}
		for _, n := range c.no {
			if ModelMatches(c.vendor, n) {
				t.Errorf("gmodel=%s selects %q", n, c.vendor)
			}
		}
	}
}

func TestResources(t *testing.T) {
	inv := detectFake(t, "8")
	schema, err := resreq.NewSchema(Resources(0)...)
	if err != nil {
		t.Fatal(err)
	}
	h := schema.NewHost()
	if err := SetHost(schema, h, append(inv.Static(), inv.Load()...)); err != nil {
		t.Fatal(err)
	}
	for sel, want := range map[string]bool{
		"select[ngpus == 8 && ngpus_physical == 8]":                           true,
		"select[gpu_model == NVIDIAA100_SXM4_80GB && gpu_maxmem >= 80G]":      true,
		"select[gpu_model7 == TeslaV100_SXM2_32GB && gpu_mtotal7 > 32000]":    true,
		"select[gpu_mode7 == 3 && gpu_mode0 == 0 && gpu_ut3 == 30]":           true,
		"select[gpu_driver == '550.54.15' && gpu_temp1 == 31]":                true,
		"select[gpu_status0 == ok && gpu_mused2 == 2005 && gpu_pstate0 == 0]": true,
		"select[gpu_shared_avg_ut == 30]":                                     true, // (0+..+60)/7 devices in Default mode
		"select[gpu_maxmem > 100G]":                                           false,
	} {
		r, err := resreq.Parse(sel, resreq.WithSchema(schema))
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		s, err := schema.Compile(r.Simple.Select, resreq.Local{})
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		if got := s.Match(h); got != want {
			t.Errorf("%s on the 8-GPU host: %v, want %v", sel, got, want)
		}
	}
}

func TestEnv(t *testing.T) {
	for _, c := range []struct {
		devices []int
		req     string
		o       EnvOptions
		want    []string
	}{
		{nil, "num=1", EnvOptions{}, nil},
		{[]int{1, 3}, "num=2", EnvOptions{}, []string{"CUDA_VISIBLE_DEVICES=1,3", "CUDA_DEVICE_ORDER=PCI_BUS_ID"}},
		{[]int{1, 3}, "num=2", EnvOptions{Renumber: true}, []string{"CUDA_VISIBLE_DEVICES=0,1", "CUDA_DEVICE_ORDER=PCI_BUS_ID"}},
		{[]int{0, 2, 4, 6}, "num=2/task", EnvOptions{Tasks: 2}, []string{"CUDA_VISIBLE_DEVICES=0,2,4,6",
			"CUDA_VISIBLE_DEVICES0=0,2", "CUDA_VISIBLE_DEVICES1=4,6", "CUDA_DEVICE_ORDER=PCI_BUS_ID"}},
		{[]int{5}, "mps=yes,nocvd", EnvOptions{MPSDir: "/var/run/xce/mps/12"}, []string{"CUDA_DEVICE_ORDER=PCI_BUS_ID",
			"CUDA_MPS_PIPE_DIRECTORY=/var/run/xce/mps/12/pipe", "CUDA_MPS_LOG_DIRECTORY=/var/run/xce/mps/12/log"}},
		{[]int{5}, "", EnvOptions{MPSDir: "/x"}, []string{"CUDA_VISIBLE_DEVICES=5", "CUDA_DEVICE_ORDER=PCI_BUS_ID"}},
	} {
		if got := Env(c.devices, mustParse(t, c.req), c.o); !slices.Equal(got, c.want) {
			t.Errorf("Env(%v, %q, %+v) = %q, want %q", c.devices, c.req, c.o, got, c.want)
		}
	}
}

// TestFakeHostsScheduled drives detection and the scheduler together:
// hosts with 0, 4 and 8 GPUs as the fake nvidia-smi describes them, jobs
// with -gpu strings, and the devices and environment each job gets.
func TestFakeHostsScheduled(t *testing.T) {
	var hs []sched.Host
	for _, n := range []string{"0", "4", "8"} {
		inv := detectFake(t, n)
		hs = append(hs, sched.Host{Name: "host" + n, MaxSlots: 16, GPUs: SchedGPUs(inv.Devices)})
	}
	reqs := []string{"num=2:mode=exclusive_process:gmodel=A100", "num=3:gmodel=A100:j_exclusive=yes", "gmodel=T4#15G:gmem=4G",
		"num=2:gmodel=V100", "num=1:gmodel=H100", "num=4:gmem=20G:mode=exclusive_process"}
	s := &sched.Snapshot{Queues: []sched.Queue{{Name: "normal"}}, Hosts: hs}
	for i, r := range reqs {
		s.Jobs = append(s.Jobs, sched.Job{Key: sched.JobKey{ID: int64(i + 1)}, User: "u", Queue: "normal", GPU: mustParse(t, r).Sched()})
	}
	d := sched.Schedule(s)
	got := map[int64]string{}
	for _, p := range d.Placements {
		h := p.Hosts[0]
		got[p.Job.ID] = h.Host + " " + strings.Join(Env(h.GPU.Devices, mustParse(t, reqs[p.Job.ID-1]), EnvOptions{}), " ")
	}
	for k, why := range d.Pending {
		got[k.ID] = strings.Join(why, " | ")
	}
	want := map[int64]string{
		1: "host8 CUDA_VISIBLE_DEVICES=0,1 CUDA_DEVICE_ORDER=PCI_BUS_ID",
		// Two of host8's four A100s are job 1's, exclusively.
		2: "Job's resource requirements not satisfied: 2 hosts | Job requirements for reserving resource (ngpus_physical) not satisfied: 1 host | " +
			"-gpu num=3:j_exclusive=yes:gmodel=A100: 0/3 hosts: 1 has fewer than 3 free GPUs, 1 has no GPU of model A100, 1 has no GPUs",
		3: "host4 CUDA_VISIBLE_DEVICES=2 CUDA_DEVICE_ORDER=PCI_BUS_ID",
		4: "host4 CUDA_VISIBLE_DEVICES=0,1 CUDA_DEVICE_ORDER=PCI_BUS_ID",
		5: "Job's resource requirements not satisfied: 3 hosts | -gpu num=1:gmodel=H100: 0/3 hosts: 2 have no GPU of model H100, 1 has no GPUs",
		// The free A100s are two; the four V100s (32 GB) are one model.
		6: "host8 CUDA_VISIBLE_DEVICES=4,5,6,7 CUDA_DEVICE_ORDER=PCI_BUS_ID",
	}
	for k := int64(1); k <= 6; k++ {
		if got[k] != want[k] {
			t.Errorf("job %d (-gpu %q):\n got %s\nwant %s", k, reqs[k-1], got[k], want[k])
		}
	}
}
