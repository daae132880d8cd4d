package config

import (
	"strings"
	"testing"

	"xce/lib/api"
)

// A profile's container reaches the job in canonical form with the
// image the job chose; a malformed value or a missing choice refuses the
// submission, not the configuration.
func TestLayerContainer(t *testing.T) {
	cfg, err := Parse("ctr.toml", []byte(`
[cluster]
default_queue = "normal"
[queues.normal]
[apps.box]
container = "Podman[ image(busybox:1.36)  options(--net=host) ]"
exec_driver = "context[user(lsfadmin)] starter[/lsf/docker-starter.py]"
[apps.choose]
container = "apptainer[image(${LSB_CONTAINER_IMAGE})]"
[apps.chosen]
container = "apptainer[image($LSB_CONTAINER_IMAGE)]"
env = { LSB_CONTAINER_IMAGE = "/images/default.sif" }
[apps.typo]
container = "podmn[image(x)]"
[apps.baddriver]
container = "docker[image(x)]"
exec_driver = "starter"
[apps.plain]
`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, app string
		env       []string
		want, err string
	}{
		{"fixed image", "box", nil, "podman[image(busybox:1.36) options(--net=host)]", ""},
		{"the job's image", "choose", []string{"LSB_CONTAINER_IMAGE=/images/a.sif"}, "apptainer[image(/images/a.sif)]", ""},
		{"the profile's env", "chosen", nil, "apptainer[image(/images/default.sif)]", ""},
		{"the job's over the profile's", "chosen", []string{"LSB_CONTAINER_IMAGE=/images/b.sif"}, "apptainer[image(/images/b.sif)]", ""},
		{"no image chosen", "choose", nil, "", "the job sets no LSB_CONTAINER_IMAGE"},
		{"an option for an image", "choose", []string{"LSB_CONTAINER_IMAGE=--privileged"}, "", "does not start with '-'"},
		{"unknown runtime", "typo", nil, "", `CONTAINER=podmn[image(x)]: unknown container runtime "podmn"`},
		{"bad exec_driver", "baddriver", nil, "", "EXEC_DRIVER=starter: "},
		{"no container", "plain", nil, "", ""},
	}
	for _, tt := range tests {
		r, err := Layer(&api.JobSpec{Queue: "normal", App: tt.app, Env: tt.env}, cfg)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: %v; want an error with %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if r.Exec.Container != tt.want {
			t.Errorf("%s: container %q, want %q", tt.name, r.Exec.Container, tt.want)
		}
		if from := r.Origin["container"].String(); tt.want != "" && from != "profile "+tt.app {
			t.Errorf("%s: container from %q", tt.name, from)
		}
	}
	if r, _ := Layer(&api.JobSpec{Queue: "normal", App: "box"}, cfg); r.Exec.ExecDriver != "context[user(lsfadmin)] starter[/lsf/docker-starter.py]" {
		t.Errorf("exec_driver %q", r.Exec.ExecDriver)
	}
	if cfg.Apps["typo"].ContainerError() == nil || cfg.Apps["box"].ContainerError() != nil {
		t.Errorf("ContainerError: typo %v, box %v", cfg.Apps["typo"].ContainerError(), cfg.Apps["box"].ContainerError())
	}
}
