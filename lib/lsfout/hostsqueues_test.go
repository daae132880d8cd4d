package lsfout

import (
	"bytes"
	"strings"
	"testing"

	"xce/lib/api"
)

// longHosts are lsHosts with what bhosts -l shows besides: reservations,
// a CPU factor, an administrator's comment on the closed host.
func longHosts() []*api.Host {
	hs := lsHosts()
	hs[0].Reserved = map[string]float64{"mem": 100, "r15s": 0.5, "ut": 0.1}
	hs[3].CpuFactor, hs[3].AdminComment, hs[3].StatusDetail = 1, "Weekly backup", "closed_Adm"
	hs[3].R15S, hs[3].MemKb = 1, 120*1024*1024
	return hs
}

func testShared() []*api.SharedResource {
	return []*api.SharedResource{
		{Name: "verilog", Total: 20, Reserved: 3, Hosts: []string{"hostA", "hostC"}},
		{Name: "scratch_tokens", Total: 2.5, Hosts: []string{"hostA", "hostB", "hostC", "hostD", "a_rather_long_host_name_01", "a_rather_long_host_name_02"}},
	}
}

func TestHostsQueuesGolden(t *testing.T) {
	shareQueue := testQueues()[2]
	shareQueue.UserShares = map[string]int32{"chem": 2, "default": 1}
	shareQueue.ShareAccounts = []*api.ShareAccount{
		{Name: "chem", Group: true, Shares: 2, Priority: 0.6666667},
		{Name: "alice", Shares: 1, Priority: 0.1234, Started: 2, CpuTimeSec: 12.34, RunTimeSec: 7034},
		{Name: "a_long_user_name", Shares: 100, Priority: 9.645, Started: 123, Reserved: 4, CpuTimeSec: 1e6, RunTimeSec: 98765432},
	}
	for name, f := range map[string]func(*bytes.Buffer) error{
		"hosts_long":   func(b *bytes.Buffer) error { return WriteHostsLong(b, longHosts(), testShared()) },
		"hosts_shared": func(b *bytes.Buffer) error { return WriteSharedResources(b, testShared()) },
		"lshosts_long": func(b *bytes.Buffer) error { return WriteLSHostsLong(b, lsHosts()[:2]) },
		"lshosts_shared": func(b *bytes.Buffer) error {
			return WriteSharedValues(b, testShared(), (*api.SharedResource).GetTotal, "-")
		},
		"lsload_long": func(b *bytes.Buffer) error { return WriteLSLoad(b, lsHosts(), LoadOptions{Long: true}) },
		"lsload_indices": func(b *bytes.Buffer) error {
			return WriteLSLoad(b, lsHosts(), LoadOptions{Indices: []string{"mem", "io", "r1m"}})
		},
		"queues_r": func(b *bytes.Buffer) error { return WriteQueuesLong(b, []*api.Queue{shareQueue}) },
		"queues_o": func(b *bytes.Buffer) error {
			return writeCustom(b, ParseQueuesFormat, "queue_name prio:-4 status: max jl_u:5 njobs pend run susp hosts", testQueues(), false)
		},
		"queues_json": func(b *bytes.Buffer) error {
			return writeCustom(b, ParseQueuesFormat, "qname stat max njobs", testQueues()[:2], true)
		},
		"hosts_o": func(b *bytes.Buffer) error {
			return writeCustom(b, ParseHostsFormat, "hname:12 status: cpuf max njobs run comments", longHosts(), false)
		},
		"hosts_json": func(b *bytes.Buffer) error {
			return writeCustom(b, ParseHostsFormat, "host_name stat max jl_u", longHosts()[:2], true)
		},
		"hosts_delimiter": func(b *bytes.Buffer) error {
			return writeCustom(b, ParseHostsFormat, "host_name max delimiter='|'", longHosts(), false)
		},
	} {
		var b bytes.Buffer
		if err := f(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkGolden(t, name, b.String())
	}
}

func writeCustom[T any](b *bytes.Buffer, parse func(string) (*Custom[T], error), spec string, recs []T, json bool) error {
	f, err := parse(spec)
	if err != nil {
		return err
	}
	if json {
		return f.WriteJSON(b, recs)
	}
	return f.Write(b, recs, false)
}

// The bhosts -l table rows of IBM's example (host_status_lsf.html), for
// the values XCE has: the STATUS line and the CURRENT LOAD titles.
func TestWriteHostsLongLayout(t *testing.T) {
	h := &api.Host{Name: "hostB", State: api.HostState_HOST_CLOSED, StatusDetail: "closed_Adm", CpuFactor: 23.1,
		MaxSlots: 55, Njobs: 2, Run: 2, R15S: 1, Ut: 0.04, TmpKb: 4231 * 1024, SwpKb: 698 * 1024, MemKb: 233 * 1024}
	var b bytes.Buffer
	if err := WriteHostsLong(&b, []*api.Host{h}, nil); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	want := []string{
		"HOST  hostB",
		"STATUS           CPUF  JL/U    MAX  NJOBS    RUN  SSUSP  USUSP    RSV DISPATCH_WINDOW",
		"closed_Adm      23.10     -     55      2      2      0      0      0      -",
		"",
		" CURRENT LOAD USED FOR SCHEDULING:",
		"              r15s   r1m  r15m    ut    pg    io   ls    it   tmp   swp   mem  slots",
		" Total         1.0   0.0   0.0    4%     -     -    -     - 4231M  698M  233M     53",
		" Reserved      0.0   0.0   0.0    0%   0.0     0    0     0    0M    0M    0M      -",
	}
	for i, w := range want {
		if i >= len(lines) || lines[i] != w {
			t.Fatalf("line %d:\n got %q\nwant %q\n%s", i+1, lines[min(i, len(lines)-1)], w, b.String())
		}
	}
}

func TestParseLoadIndices(t *testing.T) {
	for _, tc := range []struct {
		list, want, err string
	}{
		{"r15s:r1m:mem", "r15s r1m mem", ""},
		{"swap:idle:login:cpu", "swp it ls r1m", ""},
		{"io", "io", ""},
		{"r1m:nosuch", "", "nosuch: Bad index name list (the load indices are r15s r1m r15m ut pg io ls it tmp swp mem)"},
		{"r1m::mem", "", ": Bad index name list"},
	} {
		got, err := ParseLoadIndices(tc.list)
		switch {
		case tc.err != "":
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("ParseLoadIndices(%q) error %v, want %q", tc.list, err, tc.err)
			}
		case err != nil || strings.Join(got, " ") != tc.want:
			t.Errorf("ParseLoadIndices(%q) = %v, %v; want %s", tc.list, got, err, tc.want)
		}
	}
}

// The -o parsers share bjobs's: the same errors, aliases, "all".
func TestParseQueuesHostsFormat(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"queue_name nosuch", "nosuch in the format string is not a valid field name."},
		{"qname:0", "qname:0: the output width must be a positive number."},
		{"prio:5:G", "prio:5:G: a unit prefix applies only to the memory fields."},
		{"", "The format string names no field."},
	} {
		if _, err := ParseQueuesFormat(tc.spec); err == nil || err.Error() != tc.want {
			t.Errorf("ParseQueuesFormat(%q) error %v, want %q", tc.spec, err, tc.want)
		}
	}
	if _, err := ParseHostsFormat("host_name jl_p"); err == nil || err.Error() != "jl_p in the format string is not a valid field name." {
		t.Errorf("bhosts jl_p: %v", err)
	}
	for _, spec := range []string{"QNAME DESC PRIO STAT JLU JLP JLH CORELIMIT CPULIMIT DEF_CPULIMIT DATALIMIT DEF_DATALIMIT FILELIMIT MEMLIMIT:10:G DEF_MEMLIMIT PROCESSLIMIT DEF_PROCESSLIMIT RUNLIMIT DEF_RUNLIMIT STACKLIMIT SWAPLIMIT TASKLIMIT MIN_TASKLIMIT DEF_TASKLIMIT THREADLIMIT DEF_THREADLIMIT RES_REQ HOSTS all"} {
		f, err := ParseQueuesFormat(spec)
		if err != nil {
			t.Fatalf("ParseQueuesFormat: %v", err)
		}
		if want := 28 + len(queueFields()); len(f.cols) != want {
			t.Errorf("%d columns, want %d", len(f.cols), want)
		}
	}
	f, err := ParseHostsFormat("HNAME STAT JLU DISPWIN NG NGU NGX NGS NGSJX NGXA NGSA all")
	if err != nil || len(f.cols) != 11+len(hostFields()) {
		t.Errorf("ParseHostsFormat aliases: %v", err)
	}
}

// A queue's limits in -o: memory as bjobs prints it, run limits in
// minutes, task limits as numbers, "-" for none.
func TestQueueFieldValues(t *testing.T) {
	q := &api.Queue{Name: "q", Priority: 7, Open: true, MaxMemKb: 4 * 1024 * 1024, DefaultMemKb: 512 * 1024,
		RunLimitSec: 3600, DefaultRunLimitSec: 90, MaxTasks: 16, MinTasks: 2, Ssusp: 1, Ususp: 2, Hosts: []string{"cpu", "gpu01"}}
	var b bytes.Buffer
	if err := writeCustom(&b, ParseQueuesFormat, "prio status memlimit def_memlimit runlimit def_runlimit tasklimit min_tasklimit def_tasklimit susp hosts cpulimit delimiter=','", []*api.Queue{q}, false); err != nil {
		t.Fatal(err)
	}
	want := "PRIORITY,STATUS,MAX_MEMLIMIT,DEFAULT_MEMLIMIT,MAX_RUNLIMIT,DEFAULT_RUNLIMIT,MAX_TASKLIMIT,MIN_TASKLIMIT,DEFAULT_TASKLIMIT,SUSP,HOSTS,MAX_CPULIMIT\n" +
		"7,Open:Inact,4 Gbytes,512 Mbytes,60.0,1.5,16,2,-,3,cpu gpu01,-\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
