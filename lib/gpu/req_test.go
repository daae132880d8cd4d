package gpu

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct{ in, want, eff string }{
		{"-", "-", Default + ":aff=yes:gvendor=nvidia"},
		{"", "", Default + ":aff=yes:gvendor=nvidia"},
		{"num=2", "num=2", "num=2:mode=shared:mps=no:j_exclusive=no:aff=yes:gvendor=nvidia"},
		{" num = 2 / task : mode = exclusive_process ", "num=2/task:mode=exclusive_process",
			"num=2/task:mode=exclusive_process:mps=no:j_exclusive=yes:aff=yes:gvendor=nvidia"},
		{"num=4:mode=exclusive_process", "num=4:mode=exclusive_process", "num=4:mode=exclusive_process:mps=no:j_exclusive=yes:aff=yes:gvendor=nvidia"},
		{"num=2/host:mps=per_socket,share", "num=2:mps=per_socket,shared", "num=2:mode=shared:mps=per_socket,shared:j_exclusive=no:aff=yes:gvendor=nvidia"},
		{"mps=yes,nocvd,shared", "mps=yes,shared,nocvd", ""},
		{"j_exclusive=YES:aff=no:block=yes:gpack=yes", "j_exclusive=yes:aff=no:block=yes:gpack=yes", ""},
		{"block=yes", "block=yes", "num=1:mode=shared:mps=no:j_exclusive=no:aff=no:block=yes:gvendor=nvidia"},
		{"gmodel=TeslaK80-12G:gmem=8G", "gmodel=TeslaK80-12G:gmem=8G", ""},
		{"gmodel=TeslaK80#12G", "gmodel=TeslaK80-12G", ""},
		{"gmodel=V100:gtile='!'", "gmodel=V100:gtile='!'", ""},
		{"gtile=2:glink=yes:mig=3/2:gvendor=AMD", "gvendor=amd:gtile=2:glink=yes:mig=3/2", ""},
		{"nvlink=yes", "glink=yes", ""},
		{"mig=7", "mig=7", ""},
		{"num=1:", "num=1", ""},
	} {
		r, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if got := r.String(); got != tc.want {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.in, got, tc.want)
		}
		if tc.eff == "" {
			continue
		}
		e := r.Effective()
		e.Set = ^Keys(0) // print every keyword
		got := e.String()
		// Effective prints every keyword; compare the ones the case names.
		for _, kw := range strings.Split(tc.eff, ":") {
			if !strings.Contains(":"+got+":", ":"+kw+":") {
				t.Errorf("Parse(%q).Effective() = %q, missing %q", tc.in, got, kw)
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"num=0", "Bad GPU requirement: num=0: expected a positive number of GPUs"},
		{"num=x", "Bad GPU requirement: num=x: expected a positive number of GPUs"},
		{"num=2/node", "Bad GPU requirement: num=2/node: expected num=N, num=N/task or num=N/host"},
		{"mode=exclusive_thread", "Bad GPU requirement: mode=exclusive_thread: expected shared or exclusive_process"},
		{"mps=maybe", "Bad GPU requirement: mps=maybe: expected yes, per_socket, per_gpu or no, optionally with ,shared and ,nocvd"},
		{"mps=no,shared", "mps=no takes no options"},
		{"mps=yes,fast", `unknown option "fast"`},
		{"j_exclusive=1", "Bad GPU requirement: j_exclusive=1: expected yes or no"},
		{"gmodel=Tesla K80", "a model name has letters, digits and '_'"},
		{"gmodel=K80-12X", "expected model_name or model_name-mem_size"},
		{"gmem=lots", "Bad GPU requirement: gmem=lots: expected a memory size"},
		{"gmem=8B", "expected a memory size"},
		{"gtile=0", "expected a positive number of GPUs per socket or '!'"},
		{"glink=no", "Bad GPU requirement: glink=no: expected yes"},
		{"glink=yes:nvlink=yes", "give one of them once"},
		{"mig=5", "the GPU instance size is 1, 2, 3, 4 or 7"},
		{"mig=4/3", "4/3 is not a valid MIG profile"},
		{"mig=2/3", "the compute instance size is 1 to 2"},
		{"num=1:num=2", "Bad GPU requirement: num is given twice"},
		{"gpus=2", `Bad GPU requirement: unknown keyword "gpus"`},
		{"num", `Bad GPU requirement: "num": expected keyword=value`},
	} {
		_, err := Parse(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want error containing %q", tc.in, err, tc.want)
		}
	}
}

func mustParse(t *testing.T, s string) *Req {
	t.Helper()
	r, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestMerge(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		all                    bool
		cluster, queue, app, j string
		appFixed               bool
		want, err              string
	}{
		{name: "nothing anywhere", want: ""},
		{name: "job alone", j: "num=2", want: "num=2"},
		{name: "dash takes the levels below", queue: "num=2:mode=exclusive_process", j: "-", want: "num=2:mode=exclusive_process"},
		{name: "job mode with queue mps", queue: "mps=yes", j: "mode=exclusive_process", want: "mode=exclusive_process:mps=yes"},
		{name: "job over profile over queue over cluster, per keyword", cluster: "num=1:j_exclusive=yes", queue: "num=2:mps=yes",
			app: "num=3", j: "mode=shared", want: "num=3:mode=shared:mps=yes:j_exclusive=yes"},
		{name: "other keywords whole from the highest level", queue: "gmodel=V100:gmem=8G", j: "num=2:gtile=1",
			want: "num=2:gtile=1"},
		{name: "GPU_REQ_MERGE=Y merges every keyword", all: true, queue: "gmodel=V100:gmem=8G", j: "num=2:gtile=1",
			want: "num=2:gmodel=V100:gtile=1:gmem=8G"},
		{name: "fixed profile keeps its keywords", app: "num=2:mode=exclusive_process", appFixed: true, j: "num=2:mps=yes",
			want: "num=2:mode=exclusive_process:mps=yes"},
		{name: "fixed profile rejects another value", app: "num=2", appFixed: true, j: "num=4",
			err: "Bad GPU requirement: application gpuapp fixes num=2; the job asks for num=4"},
		{name: "fixed profile's model stays", app: "gmodel=A100", appFixed: true, j: "gmem=10G", want: "gmodel=A100:gmem=10G"},
	} {
		lv := func(name, s string, fixed bool) Level {
			if s == "" {
				return Level{Name: name}
			}
			return Level{Name: name, Req: mustParse(t, s), Fixed: fixed}
		}
		got, err := Merge(tc.all, lv("cluster", tc.cluster, false), lv("queue normal", tc.queue, false),
			lv("application gpuapp", tc.app, tc.appFixed), lv("job", tc.j, false))
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: err %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		// gmodel and gtile print before gmem in the synopsis order.
		if s := got.String(); s != tc.want {
			t.Errorf("%s: Merge = %q, want %q", tc.name, s, tc.want)
		}
	}
}

func TestFromRusage(t *testing.T) {
	r, ok := FromRusage(2, false)
	if !ok || r.String() != "num=2" || r.Rusage() != "rusage[ngpus_physical=2]" {
		t.Fatalf("FromRusage(2) = %v %v", r, ok)
	}
	r, _ = FromRusage(1, true)
	if r.Rusage() != "rusage[ngpus_physical=1/task]" {
		t.Errorf("per task: %s", r.Rusage())
	}
	for _, n := range []float64{0, -1, 1.5} {
		if _, ok := FromRusage(n, false); ok {
			t.Errorf("FromRusage(%v) accepted", n)
		}
	}
	if (&Req{}).Rusage() != "rusage[ngpus_physical=1]" {
		t.Error("the default is one GPU")
	}
}

func TestCheckCeiling(t *testing.T) {
	e := mustParse(t, "num=2/task").Effective()
	if err := CheckCeiling(e, 4, 2, "queue gpu"); err != nil {
		t.Error(err)
	}
	err := CheckCeiling(e, 4, 3, "queue gpu")
	if err == nil || err.Error() != "Job requests 6 GPUs per host; queue gpu allows at most 4" {
		t.Errorf("got %v", err)
	}
}

func FuzzParseGPUReq(f *testing.F) {
	for _, s := range []string{"-", "", "num=2", "num=2/task:mode=exclusive_process:mps=yes,shared",
		"j_exclusive=yes:aff=no:block=yes:gpack=no:gvendor=nvidia", "gmodel=TeslaK80-12G:gmem=8G:gtile='!'",
		"glink=yes:mig=7/1", "gmodel=A100#80GB", "num=1::", "mps=per_gpu,nocvd", "gmem=1.5TB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "Bad GPU requirement") {
				t.Fatalf("Parse(%q): error without the prefix: %v", s, err)
			}
			return
		}
		// What String prints parses back to the same requirement.
		out := r.String()
		r2, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its String %q does not parse: %v", s, out, err)
		}
		if r2.String() != out || r2.Set != r.Set || r2.MemMB != r.MemMB || r2.ModelMemMB != r.ModelMemMB {
			t.Fatalf("round trip of %q: %q then %q", s, out, r2.String())
		}
		e := r.Effective()
		if e.Num <= 0 || e.Mode == ModeExclusiveProcess && !e.JExclusive {
			t.Fatalf("Effective(%q) = %+v", s, e)
		}
	})
}
