package lsfimport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"xce/lib/config"
)

// importFiles writes files into a new directory and imports it; the
// result must load.
func importFiles(t *testing.T, files map[string]string) (string, string, *config.Config) {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	text, report, err := Import(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("xce.toml", []byte(text))
	if err != nil {
		t.Fatalf("does not load: %v\n%s", err, text)
	}
	return text, reportText(report), cfg
}

func TestImportEdges(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		toml  []string // substrings of the xce.toml
		notes []string // substrings of the report
	}{
		{
			name:  "no lsf.conf: KB assumed",
			files: map[string]string{"lsb.queues": "Begin Queue\nQUEUE_NAME = q\nMEMLIMIT = 2048\nEnd Queue\n"},
			toml:  []string{`max_mem = "2MB"  # MEMLIMIT 2048 in KB (LSF_UNIT_FOR_LIMITS not set`},
			notes: []string{"lsf.conf: LSF_UNIT_FOR_LIMITS: not found; memory limits (MEMLIMIT, Limit MEM) are taken as KB"},
		},
		{
			name: "lsf.conf switches",
			files: map[string]string{"lsf.conf": "LSB_JOB_MEMLIMIT=Y\nLSB_MEMLIMIT_ENFORCE=y\nLSB_STDOUT_DIRECT=Y\n",
				"lsb.queues": "Begin Queue\nQUEUE_NAME = q\nEnd Queue\n"},
			toml: []string{"memlimit_enforce = true", "job_memlimit = true", "stdout_direct = true"},
		},
		{
			name: "GPU requirements",
			files: map[string]string{"lsf.conf": "LSB_GPU_REQ=\"num=1:mode=shared\"\n",
				"lsb.params":       "Begin Parameters\nGPU_REQ_MERGE = Y\nEnd Parameters\n",
				"lsb.queues":       "Begin Queue\nQUEUE_NAME = q\nGPU_REQ = \"num=2:gmodel=TeslaK80#12G\"\nEnd Queue\n",
				"lsb.applications": "Begin Application\nNAME = a\nGPU_REQ = \"num=1:mode=bogus\"\nEnd Application\n"},
			toml:  []string{`gpu_req = "num=1:mode=shared"`, "gpu_req_merge = true", `gpu_req = "num=2:gmodel=TeslaK80#12G"`},
			notes: []string{"lsb.applications:3: GPU_REQ: not translated: Bad GPU requirement: mode=bogus"},
		},
		{
			name:  "master candidates",
			files: map[string]string{"lsf.conf": "LSF_MASTER_LIST=\"hosta hostb hostc\"\nLSB_MBD_PORT=7869\n", "lsb.queues": "Begin Queue\nQUEUE_NAME = q\nEnd Queue\n"},
			toml:  []string{`controllers = ["hosta:7869", "hostb:7869", "hostc:7869"]`},
		},
		{
			name:  "lsf.conf switch off",
			files: map[string]string{"lsf.conf": "LSB_STDOUT_DIRECT=maybe\n", "lsb.queues": "Begin Queue\nQUEUE_NAME = q\nEnd Queue\n"},
			notes: []string{`lsf.conf:1: LSB_STDOUT_DIRECT: not translated: "maybe" is neither y nor n`},
		},
		{
			name: "lsb files under lsbatch/NAME/configdir",
			files: map[string]string{
				"lsf.conf":                         "LSF_UNIT_FOR_LIMITS=GB\n",
				"lsbatch/c1/configdir/lsb.queues":  "Begin Queue\nQUEUE_NAME = q\nMEMLIMIT = 4 16\nEnd Queue\n",
				"lsbatch/c1/configdir/lsb.nqsmaps": "",
			},
			toml:  []string{`default_mem = "4GB"`, `max_mem = "16GB"`},
			notes: []string{"lsbatch/c1/configdir/lsb.nqsmaps: not read"},
		},
		{
			name:  "several queues, no DEFAULT_QUEUE",
			files: map[string]string{"lsb.queues": "Begin Queue\nQUEUE_NAME = b\nEnd Queue\nBegin Queue\nQUEUE_NAME = a\nEnd Queue\n"},
			toml:  []string{`default_queue = "b"  # chosen by the import`},
			notes: []string{"lsb.params: DEFAULT_QUEUE: not set and no queue is named default; the first queue, b, is made the default"},
		},
		{
			name: "a queue named default",
			files: map[string]string{"lsb.queues": "Begin Queue\nQUEUE_NAME = b\nEnd Queue\nBegin Queue\nQUEUE_NAME = default\nEnd Queue\n",
				"lsb.params": "Begin Parameters\nDEFAULT_QUEUE = nosuch\nEnd Parameters\n"},
			toml:  []string{`default_queue = "default"`},
			notes: []string{"lsb.params:2: DEFAULT_QUEUE: not translated: no imported queue is named nosuch"},
		},
		{
			name: "host names ending in digits, and +N preferences",
			files: map[string]string{
				"lsf.cluster.c1": "Begin Host\nHOSTNAME model type server\nnode01 ! ! 1\ngpu017 ! ! 1\nc3-14 ! ! 1\nhost ! ! 1\nEnd Host\n",
				"lsb.hosts":      "Begin HostGroup\nGROUP_NAME GROUP_MEMBER\ngroup (node01 c3-14)\nEnd HostGroup\n",
				"lsb.queues":     "Begin Queue\nQUEUE_NAME = q\nHOSTS = node01 gpu017 c3-14 host+2 group+1 others+1 node0\nEnd Queue\n",
			},
			toml:  []string{`hosts = ["node01", "gpu017", "c3-14", "host+2", "group+1", "others+1"]`, `members = ["node01", "c3-14"]`},
			notes: []string{"HOSTS: not translated for q: node0 is not a known host or host group"},
		},
		{
			name: "unknown hosts and preemption against priority",
			files: map[string]string{"lsb.queues": `
Begin Queue
QUEUE_NAME = hi
PRIORITY = 50
HOSTS = ghost
PREEMPTION = PREEMPTIVE[lo hi2 nosuch] PREEMPTABLE[lo]
End Queue
Begin Queue
QUEUE_NAME = hi2
PRIORITY = 50
End Queue
Begin Queue
QUEUE_NAME = lo
PRIORITY = 10
TASKLIMIT = 8 4
End Queue
`},
			toml: []string{`preemptive = ["lo"]`},
			notes: []string{
				"lsb.queues:5: HOSTS: not translated for hi: ghost is not a known host or host group",
				"lsb.queues:5: HOSTS: not translated: none of the hosts is known",
				"lsb.queues:6: PREEMPTION: not translated: hi2: its priority 50 is not lower than hi's 50",
				"lsb.queues:6: PREEMPTION: not translated: nosuch: no such queue",
				"lsb.queues:6: PREEMPTION: not translated: lo: its priority 10 is not higher than hi's 50",
				"lsb.queues:15: TASKLIMIT: not translated: queues.lo.min_tasks = 8 would be refused: 8 is more than max_tasks (4)",
			},
		},
		{
			name: "vertical Limit with PER_PROJECT, and percentages",
			files: map[string]string{"lsf.conf": "LSF_UNIT_FOR_LIMITS=MB\n", "lsb.resources": `
Begin Limit
PER_PROJECT   SLOTS  MEM   SWP
(p1 p2)       10     1024  -
p3            -      50%   100
End Limit
Begin Limit
NAME = nothing
PROJECTS = p4
JOBS = 3
End Limit
`},
			toml: []string{"[projects.p1]\nmax_slots = 10  # SLOTS\nmax_mem = \"1GB\"", "[projects.p2]"},
			notes: []string{
				`lsb.resources:5: MEM: Limit: not translated: "50%" is not an amount of memory`,
				"lsb.resources:5: SWP: Limit: not translated: xce project quotas are slots, memory and GPUs",
				"lsb.resources:10: JOBS: Limit nothing: not translated",
			},
		},
		{
			name: "application env, limits and bad values",
			files: map[string]string{"lsb.applications": `
Begin Application
NAME = a
ENV_VARS = "X='1, 2', Y=plain, bad"
RUNLIMIT = 10 20
MEMLIMIT = lots
RES_REQ = select[nosuch>1]
End Application
Begin Application
DESCRIPTION = no name
End Application
`},
			toml: []string{`env = { X = "1, 2", Y = "plain" }`},
			notes: []string{
				`lsb.applications:4: ENV_VARS: not translated: "bad" is not name='value'`,
				"lsb.applications:5: RUNLIMIT: not translated: expected one [hour:]minute value",
				`lsb.applications:6: MEMLIMIT: not translated: "lots" is not an amount of memory`,
				"lsb.applications:7: RES_REQ: not translated: apps.a.res_req",
				"lsb.applications:9: Begin Application: not translated: the profile has no NAME",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, report, _ := importFiles(t, tt.files)
			for _, s := range tt.toml {
				if !strings.Contains(text, s) {
					t.Errorf("xce.toml lacks %q:\n%s", s, text)
				}
			}
			for _, s := range tt.notes {
				if !strings.Contains(report, s) {
					t.Errorf("report lacks %q:\n%s", s, report)
				}
			}
		})
	}
}

func TestImportErrors(t *testing.T) {
	if _, _, err := Import(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing directory is not an error")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "README"), []byte("not LSF"), 0o644)
	if _, _, err := Import(dir); err == nil || !strings.Contains(err.Error(), "no LSF configuration files") {
		t.Errorf("a directory without LSF files: %v", err)
	}
}

// TestImportNameWithBadBytes: a Limit name quoted in a comment of the
// imported xce.toml, with invalid UTF-8 or a control character in it,
// made a document that did not load (found by FuzzImport).
func TestImportNameWithBadBytes(t *testing.T) {
	for _, name := range []string{"\xff", "a\rb", "a\x01b", "a\x7fb"} {
		dir := t.TempDir()
		text := "Begin Limit\nNAME = " + name + "\nPER_PROJECT = p\nSLOTS = 1\nEnd Limit\n"
		if err := os.WriteFile(filepath.Join(dir, "lsb.resources"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		out, _, err := Import(dir)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Parse("xce.toml", []byte(out))
		if err != nil {
			t.Errorf("NAME = %q: the imported xce.toml does not load: %v\n%s", name, err, out)
			continue
		}
		if p := cfg.Projects["p"]; p == nil || p.MaxSlots != 1 {
			t.Errorf("NAME = %q: project p's quota is lost:\n%s", name, out)
		}
	}
}
