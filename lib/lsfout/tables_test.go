package lsfout

import (
	"bytes"
	"strings"
	"testing"
)

// The bqueues example of output-formats.md section 6, byte for byte.
func TestWriteQueuesSpecExample(t *testing.T) {
	var b bytes.Buffer
	if err := WriteQueues(&b, testQueues()[:3], false); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"QUEUE_NAME      PRIO STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN  SUSP \n" +
		"owners           43  Open:Active       -    6    -    -     1     0     1     0\n" +
		"night            40  Open:Inact        4    2    -    1     4     4     0     0\n" +
		"normal           30  Open:Active       -    2    -    -     0     0     0     0\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestWriteQueuesGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteQueues(&b, testQueues(), false); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "queues", b.String())
	b.Reset()
	if err := WriteQueues(&b, testQueues(), true); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "QUEUE_NAME") || strings.Count(b.String(), "\n") != len(testQueues()) {
		t.Errorf("noheader: got\n%s", b.String())
	}
}

// The bhosts example of output-formats.md section 7, byte for byte.
func TestWriteHostsSpecExample(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHosts(&b, testHosts()[:3], HostsOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"HOST_NAME          STATUS       JL/U    MAX  NJOBS    RUN  SSUSP  USUSP    RSV \n" +
		"hostA              ok              -     55      2      2      0      0      0\n" +
		"hostB              closed          -      8      8      8      0      0      0\n" +
		"verylonghostname.e unavail         -      -      0      0      0      0      0\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestWriteHostsGolden(t *testing.T) {
	for name, opt := range map[string]HostsOptions{
		"hosts":      {},
		"hosts_wide": {Wide: true},
	} {
		var b bytes.Buffer
		if err := WriteHosts(&b, testHosts(), opt); err != nil {
			t.Fatal(err)
		}
		checkGolden(t, name, b.String())
	}
	var b bytes.Buffer
	if err := WriteHosts(&b, testHosts(), HostsOptions{NoHeader: true, Wide: true}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "HOST_NAME") || !strings.Contains(b.String(), "\nverylonghostname.example.com unavail ") {
		t.Errorf("-w -noheader: want no header and the full host name:\n%s", b.String())
	}
}
