package lsfout

import (
	"bytes"
	"testing"
	"time"

	"xce/lib/api"
)

// TestParamsFormats: bparams -a and -l, and showconf, as LSF lays them
// out, with a fixed clock on a single-digit day.
func TestParamsFormats(t *testing.T) {
	info := &api.ClusterInfo{Parameters: []*api.Parameter{
		{Name: "DEFAULT_QUEUE", Value: "normal"}, {Name: "MBD_SLEEP_TIME", Value: "1"},
		{Name: "JOB_TERMINATE_INTERVAL", Value: "10"}, {Name: "SOME_NEW", Value: "x"}}}
	now := time.Date(2026, 12, 1, 9, 5, 3, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		write func(*bytes.Buffer) error
		want  string
	}{
		{"-a", func(b *bytes.Buffer) error { return WriteParamsAll(b, info, now) },
			"lsb.params configuration at Tue Dec  1 09:05:03 UTC 2026\n    DEFAULT_QUEUE = normal\n    MBD_SLEEP_TIME = 1\n    JOB_TERMINATE_INTERVAL = 10\n    SOME_NEW = x\n"},
		{"-l", func(b *bytes.Buffer) error { return WriteParamsLong(b, info) },
			"System default queues for automatic queue selection:\n    DEFAULT_QUEUE = normal\n\n" +
				"The interval for dispatching jobs by master batch daemon:\n    MBD_SLEEP_TIME = 1 (seconds)\n\n" +
				"The interval to terminate a job:\n    JOB_TERMINATE_INTERVAL = 10 \n\n" +
				"SOME_NEW:\n    SOME_NEW = x\n"},
		{"showconf", func(b *bytes.Buffer) error {
			return WriteShowConf(b, "SBD", "hostA", []Setting{{"LSF_UNIT_FOR_LIMITS", "MB"}}, now)
		}, "SBD configuration for host <hostA> at Tue Dec  1 09:05:03 UTC 2026\n    LSF_UNIT_FOR_LIMITS=MB\n"},
	} {
		var b bytes.Buffer
		if err := tc.write(&b); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, b.String(), tc.want)
		}
	}
}

// TestLSInfoFormats: lsinfo's three parts and -l.
func TestLSInfoFormats(t *testing.T) {
	info := &api.ClusterInfo{Resources: []*api.ResourceInfo{{Name: "a_very_long_resource", Kind: "Numeric", Increasing: true, Description: "d"}}}
	res := LSResources(info, 30)
	hosts := []*api.Host{{Type: "X86_64", Model: "Intel_EM64T", CpuFactor: 60}, {Type: "X86_64", Model: "Intel_EM64T", CpuFactor: 60}}
	var b bytes.Buffer
	if err := WriteLSInfo(&b, res[len(res)-1:], hosts, LSInfoOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "RESOURCE_NAME   TYPE    ORDER  DESCRIPTION\n" +
		"a_very_long_r Numeric    Inc   d\n\n" +
		"TYPE_NAME\nX86_64\n\n" +
		"MODEL_NAME      CPU_FACTOR      ARCHITECTURE\nIntel_EM64T          60.00      -\n"
	if b.String() != want {
		t.Errorf("lsinfo:\n got %q\nwant %q", b.String(), want)
	}
	b.Reset()
	if err := WriteLSInfoLong(&b, res[9:10]); err != nil {
		t.Fatal(err)
	}
	if want := "RESOURCE_NAME:  swp\nDESCRIPTION: Available swap space (Mbytes) (alias: swap)\nTYPE    ORDER   INTERVAL  BUILTIN  DYNAMIC\nNumeric   Dec         30      Yes      Yes\n"; b.String() != want {
		t.Errorf("lsinfo -l:\n got %q\nwant %q", b.String(), want)
	}
}
