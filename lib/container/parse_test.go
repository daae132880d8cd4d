package container

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want *Spec
		err  string // part of the error; "" for none
	}{
		{in: "podman[image(busybox:latest)]", want: &Spec{Runtime: Podman, Image: "busybox:latest"}},
		{in: " Docker[ image( ubuntu ) options(--rm --net=host -v /share:/share @/share/passwd.sh) ] ",
			want: &Spec{Runtime: Docker, Image: "ubuntu", Options: []string{"--rm", "--net=host", "-v", "/share:/share", "@/share/passwd.sh"}}},
		{in: "nvidia-docker[image(nvcr.io/nvidia/cuda:12) options(--ipc=host)]",
			want: &Spec{Runtime: NvidiaDocker, Image: "nvcr.io/nvidia/cuda:12", Options: []string{"--ipc=host"}}},
		{in: "singularity[image(/images/ubuntu.sif) options(--cleanenv)]",
			want: &Spec{Runtime: Singularity, Image: "/images/ubuntu.sif", Options: []string{"--cleanenv"}}},
		{in: "apptainer[image($LSB_CONTAINER_IMAGE)]", want: &Spec{Runtime: Apptainer, Image: "$LSB_CONTAINER_IMAGE"}},
		{in: "enroot[image(/sqsh/pytorch.sqsh) options(--rw)]", want: &Spec{Runtime: Enroot, Image: "/sqsh/pytorch.sqsh", Options: []string{"--rw"}}},
		{in: `podman[image(x) options(--env "A=a b" --label 'k=(v)' --security-opt=label=disable) container_io() job_pre_post()]`,
			want: &Spec{Runtime: Podman, Image: "x", Options: []string{"--env", "A=a b", "--label", "k=(v)", "--security-opt=label=disable"}, ContainerIO: true, JobPrePost: true}},
		{in: "podman[image(x) options(--tmpfs '/t:size=(1g)')]", want: &Spec{Runtime: Podman, Image: "x", Options: []string{"--tmpfs", "/t:size=(1g)"}}},
		{in: "podman[image(x) options(--tmpfs /t:size=(1g))]", err: "invalid command line string"},

		{in: "", err: "expected RUNTIME[image(IMAGE) options(OPTIONS)]"},
		{in: "podman", err: "expected RUNTIME["},
		{in: "podmn[image(x)]", err: `unknown container runtime "podmn"; use podman, docker, nvidia-docker, apptainer, singularity or enroot`},
		{in: "[image(x)]", err: "no container runtime"},
		{in: "shifter[image(x)]", err: "container runtime shifter is not supported"},
		{in: "kubernetes[template(/p.yaml)]", err: "kubernetes is not supported"},
		{in: "podman[image(x) options(--rm]", err: "options(: no matching ')'"},
		{in: "podman[options(--rm)]", err: "no image()"},
		{in: "podman[image()]", err: "image() is empty"},
		{in: "podman[image(a b)]", err: `' ' cannot be part of an image name`},
		{in: "podman[image(--privileged)]", err: "does not start with '-'"},
		{in: "podman[image($HOME)]", err: "only $LSB_CONTAINER_IMAGE can be expanded"},
		{in: "apptainer[image(docker://busybox:1.36@sha256:ab12)]", want: &Spec{Runtime: Apptainer, Image: "docker://busybox:1.36@sha256:ab12"}},
		{in: "podman[image(x) image(y)]", err: "image() is given twice"},
		{in: "podman[image(x) volumes(/a)]", err: "unknown keyword volumes()"},
		{in: "podman[image(x) options]", err: "options: expected '('"},
		{in: "podman[image(x) options(--user=5)]", err: "--user is reserved"},
		{in: "docker[image(x) options(-u 5)]", err: "-u is reserved"},
		{in: "docker[image(x) options(--cgroup-parent /a)]", err: "--cgroup-parent is reserved"},
		{in: "podman[image(x) options(--name n)]", err: "--name is reserved"},
		{in: "apptainer[image(x) options(--pwd /x)]", err: "--pwd is reserved"},
		{in: `podman[image(x) options("unterminated)]`, err: "no matching ')'"},
		{in: "podman[image(x) options(a ; b)]", err: "options(a ; b)"},
		{in: "podman[image(x) options(@)]", err: "'@' names no script"},
		{in: "podman[image(x) container_io(yes)]", err: "container_io() takes no argument"},
		{in: "podman[image(x) !]", err: `unexpected "!"`},
	} {
		got, err := Parse(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "CONTAINER=") {
				t.Errorf("Parse(%q): error %q does not name CONTAINER", tc.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
		again, err := Parse(got.String())
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("Parse(String() = %q) = %+v, %v; want %+v", got.String(), again, err, got)
		}
	}
}

func TestResolveImage(t *testing.T) {
	env := map[string]string{"LSB_CONTAINER_IMAGE": "busybox:1.36"}
	look := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, tc := range []struct{ image, want, err string }{
		{"ubuntu", "ubuntu", ""},
		{"$LSB_CONTAINER_IMAGE", "busybox:1.36", ""},
		{"registry.example/${LSB_CONTAINER_IMAGE}", "registry.example/busybox:1.36", ""},
	} {
		got, err := (&Spec{Image: tc.image}).ResolveImage(look)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %q, %v; want error %q", tc.image, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.image, got, err, tc.want)
		}
	}
	delete(env, "LSB_CONTAINER_IMAGE")
	if _, err := (&Spec{Image: "$LSB_CONTAINER_IMAGE"}).ResolveImage(look); err == nil || !strings.Contains(err.Error(), "the job sets no LSB_CONTAINER_IMAGE") {
		t.Errorf("unset variable: %v", err)
	}
	// The job's value goes on a command line and back into image():
	// nothing that would end either early.
	for _, bad := range []string{"a b", "--privileged", "x)options(--privileged", "x]", "a;b", "$(id)"} {
		env["LSB_CONTAINER_IMAGE"] = bad
		if got, err := (&Spec{Image: "$LSB_CONTAINER_IMAGE"}).ResolveImage(look); err == nil {
			t.Errorf("LSB_CONTAINER_IMAGE=%q was taken: %q", bad, got)
		}
	}
}

func TestExpandOptions(t *testing.T) {
	sp, err := Parse("podman[image(x) options(--net=host @/a.sh -e X @/b.sh)]")
	if err != nil {
		t.Fatal(err)
	}
	if got := sp.Scripts(); !reflect.DeepEqual(got, []string{"/a.sh", "/b.sh"}) {
		t.Errorf("Scripts() = %q", got)
	}
	out := map[string]string{"/a.sh": "-v /etc/passwd:/etc/passwd:ro\n", "/b.sh": ""}
	got, err := sp.ExpandOptions(func(p string) (string, error) { return out[p], nil })
	want := []string{"--net=host", "-v", "/etc/passwd:/etc/passwd:ro", "-e", "X"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ExpandOptions = %q, %v; want %q", got, err, want)
	}
	out["/b.sh"] = "--user 0"
	if _, err := sp.ExpandOptions(func(p string) (string, error) { return out[p], nil }); err == nil || !strings.Contains(err.Error(), "reserves") {
		t.Errorf("a script's reserved option: %v", err)
	}
}

func TestParseExecDriver(t *testing.T) {
	d, err := ParseExecDriver("context[user(lsfadmin)] starter[/lsf/docker-starter.py] controller[/lsf/docker-control.py] monitor[/lsf/docker-monitor.py]")
	want := &ExecDriver{User: "lsfadmin", Starter: "/lsf/docker-starter.py", Controller: "/lsf/docker-control.py", Monitor: "/lsf/docker-monitor.py"}
	if err != nil || !reflect.DeepEqual(d, want) {
		t.Fatalf("ParseExecDriver = %+v, %v", d, err)
	}
	if again, err := ParseExecDriver(d.String()); err != nil || !reflect.DeepEqual(again, d) {
		t.Errorf("round trip: %+v, %v", again, err)
	}
	for in, msg := range map[string]string{
		"context[user(a)]":              "no starter[]",
		"starter[]":                     "names no program",
		"context[lsfadmin] starter[/s]": "expected context[user(USER)]",
		"starter[/s] starter[/t]":       "given twice",
		"starter[/s] runner[/r]":        "unknown keyword runner[]",
		"starter[/s":                    "no matching ']'",
		"starter /s":                    "expected '['",
	} {
		if _, err := ParseExecDriver(in); err == nil || !strings.Contains(err.Error(), msg) || !strings.HasPrefix(err.Error(), "EXEC_DRIVER=") {
			t.Errorf("ParseExecDriver(%q) = %v; want %q", in, err, msg)
		}
	}
}
