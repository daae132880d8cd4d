package container

import (
	"reflect"
	"testing"
)

// FuzzParse: Parse never panics, and what it accepts prints (String) to
// a value it parses the same way.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"podman[image(busybox)]",
		"docker[image(u) options(--rm -v /a:/a @/s.sh) container_io() job_pre_post()]",
		`podman[image($LSB_CONTAINER_IMAGE) options(--env "A=(b c)" 'x y')]`,
		"apptainer[image(/i.sif) options(--nv)]",
		"enroot[image(/i.sqsh)]",
		"podmn[image(x)]",
		"podman[image(x) options(--user 0)]",
		"podman[image(x) options((((]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := Parse(s)
		if err != nil {
			return
		}
		again, err := Parse(sp.String())
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its String %q: %v", s, sp.String(), err)
		}
		if !reflect.DeepEqual(again, sp) {
			t.Fatalf("Parse(%q) = %+v, but Parse(%q) = %+v", s, sp, sp.String(), again)
		}
	})
}

// FuzzParseExecDriver: never panics; what it accepts round-trips.
func FuzzParseExecDriver(f *testing.F) {
	f.Add("context[user(lsfadmin)] starter[/s.py] controller[/c.py] monitor[/m.py]")
	f.Add("starter[/s]")
	f.Add("context[user(] starter[")
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseExecDriver(s)
		if err != nil {
			return
		}
		again, err := ParseExecDriver(d.String())
		if err != nil || !reflect.DeepEqual(again, d) {
			t.Fatalf("ParseExecDriver(%q) = %+v; its String %q gives %+v, %v", s, d, d.String(), again, err)
		}
	})
}
