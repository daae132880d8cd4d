package config

import (
	"strings"
	"testing"

	"xce/lib/api"
)

const gpuConfig = `
[cluster]
default_queue = "normal"
gpu_req = "mode=shared:gmodel=V100"

[queues.normal]
[queues.gpu]
gpu_req = "num=2:j_exclusive=yes"

[apps.fixedgpu]
gpu_req = "num=1:mode=exclusive_process"
fixed = ["gpu_req"]

[apps.dfltgpu]
gpu_req = "num=4"

[projects.small]
max_gpus = 2
`

func TestLayerGPU(t *testing.T) {
	cfg, err := Parse("gpu.toml", []byte(gpuConfig))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		sub  *api.JobSpec
		gpu  string // effective gpu, or the rejection's text
		from string
	}{
		{"no GPUs asked for", &api.JobSpec{}, "", ""},
		{"job -gpu with the cluster default", &api.JobSpec{Gpu: "num=2"}, "num=2:mode=shared:mps=no:j_exclusive=no:gmodel=V100", "job + default"},
		{"dash takes the levels", &api.JobSpec{Gpu: "-", Queue: "gpu"}, "num=2:mode=shared:mps=no:j_exclusive=yes:gmodel=V100", "queue gpu + default"},
		{"queue makes every job a GPU job", &api.JobSpec{Queue: "gpu"}, "num=2:mode=shared:mps=no:j_exclusive=yes:gmodel=V100", "queue gpu + default"},
		{"job over profile default", &api.JobSpec{App: "dfltgpu", Gpu: "num=1"}, "num=1:mode=shared:mps=no:j_exclusive=no:gmodel=V100", "job + profile dfltgpu + default"},
		{"fixed profile", &api.JobSpec{App: "fixedgpu", Gpu: "num=2"}, "Bad GPU requirement: application profile fixedgpu fixes num=1; the job asks for num=2", ""},
		{"rusage stands for num", &api.JobSpec{ResReq: []string{"rusage[ngpus_physical=3]"}}, "num=3:mode=shared:mps=no:j_exclusive=no:gmodel=V100", "job + default"},
		{"project quota", &api.JobSpec{Project: "small", Gpu: "num=3"}, "Job requests 3 GPUs; project small allows at most 2", ""},
		{"bad -gpu", &api.JobSpec{Gpu: "num=x"}, "Bad GPU requirement", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Layer(tt.sub, cfg)
			if err != nil {
				if !strings.HasPrefix(err.Error(), tt.gpu) || tt.gpu == "" {
					t.Fatalf("rejected: %v; want %q", err, tt.gpu)
				}
				return
			}
			if got := r.Effective.Gpu; got != tt.gpu {
				t.Errorf("gpu %q, want %q", got, tt.gpu)
			}
			if got := r.Origin["gpu"].String(); got != tt.from {
				t.Errorf("origin %q, want %q", got, tt.from)
			}
		})
	}
	if _, err := Parse("bad.toml", []byte("[queues.normal]\ngpu_req = \"mode=weird\"\n")); err == nil || !strings.Contains(err.Error(), "queues.normal.gpu_req") {
		t.Errorf("a bad gpu_req: %v", err)
	}
}
