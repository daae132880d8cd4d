package lsfout

import (
	"bytes"
	"strings"
	"testing"

	"xce/lib/api"
)

// Every load index the host measured is printed, "-" only for the ones it
// did not; a host without swap has 0M free, not "-".
func TestLoadIndicesMeasured(t *testing.T) {
	pg, io, it := 1.25, 8470.4, 42.0
	ls := int32(3)
	measured := &api.Host{Name: "hostA", State: api.HostState_HOST_OK, R15S: 0.5, R1M: 1, R15M: 2, Ut: 0.84,
		Pg: &pg, Io: &io, Ls: &ls, It: &it, TmpKb: 74 << 20, SwpKb: 0, MemKb: 22 << 20, LoadMeasured: true}
	bare := &api.Host{Name: "hostB", State: api.HostState_HOST_OK, R1M: 1, TmpKb: 74 << 20, MemKb: 22 << 20}
	var b bytes.Buffer
	if err := WriteLSLoad(&b, []*api.Host{measured, bare}, LoadOptions{Long: true}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if got := strings.Fields(lines[1]); strings.Join(got[6:], " ") != "1.2 8470 3 42 74G 0M 22G" {
		t.Errorf("measured host: %q", lines[1])
	}
	if got := strings.Fields(lines[2]); strings.Join(got[6:], " ") != "- - - - 74G - 22G" {
		t.Errorf("host without pg io ls it swp: %q", lines[2])
	}
	b.Reset()
	if err := WriteHostsLong(&b, []*api.Host{measured}, nil); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, " Total") {
			if got := strings.Fields(l); strings.Join(got[5:12], " ") != "1.2 8470 3 42 74G 0M 22G" {
				t.Errorf("bhosts -l Total row: %q", l)
			}
		}
	}
}
