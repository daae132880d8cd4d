package lsfimport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

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
	cfg, err := config.Parse("xce.toml", []byte(withoutLimits(t, text)))
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
			notes: []string{"lsf.conf: LSF_UNIT_FOR_LIMITS: not found; memory limits (MEMLIMIT, Limit MEM) and bare memory amounts in resource requirements are taken as KB"},
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
				"lsb.queues:5: HOSTS: policy lost: not translated: none of the hosts is known",
				"lsb.queues:6: PREEMPTION: not translated: hi2: its priority 50 is not lower than hi's 50",
				"lsb.queues:6: PREEMPTION: not translated: nosuch: no such queue",
				"lsb.queues:6: PREEMPTION: not translated: lo: its priority 10 is not higher than hi's 50",
				"lsb.queues:15: TASKLIMIT: policy lost: not translated: queues.lo.min_tasks = 8 would be refused: 8 is more than max_tasks (4)",
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
			toml: []string{
				"[[limits]]\nname = \"limit_4\"\nper_project = [\"p1\", \"p2\"]\nslots = 10\nmem = \"1GB\"  # MEM 1024 in MB (LSF_UNIT_FOR_LIMITS)\n",
				"[[limits]]\nname = \"nothing\"\nprojects = [\"p4\"]\njobs = 3\n",
			},
			// LSF ignores a Limit whose MEM is a percentage without
			// PER_HOST; the import does not carry it, and says so.
			notes: []string{"lsb.resources:5: Limit: policy lost: not translated: the Limit would be refused: limits.1.mem: 50%: a percentage needs per_host"},
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
				"lsb.applications:7: RES_REQ: policy lost: not translated: apps.a.res_req",
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
// made a document that did not load (found by FuzzImport). Such a name is
// no xce name: the limit is a loss, reported, and the text still loads.
func TestImportNameWithBadBytes(t *testing.T) {
	for _, name := range []string{"\xff", "a\rb", "a\x01b", "a\x7fb"} {
		dir := t.TempDir()
		text := "Begin Limit\nNAME = " + name + "\nPER_PROJECT = p\nSLOTS = 1\nEnd Limit\n"
		if err := os.WriteFile(filepath.Join(dir, "lsb.resources"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		out, report, err := Import(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := config.Parse("xce.toml", []byte(withoutLimits(t, out))); err != nil {
			t.Errorf("NAME = %q: the imported xce.toml does not load: %v\n%s", name, err, out)
			continue
		}
		if !strings.Contains(reportText(report), "lsb.resources:1: Begin Limit: policy lost: Limit") {
			t.Errorf("NAME = %q: the limit's loss is not reported:\n%s", name, reportText(report))
		}
	}
}

// TestImportRegularFilesOnly: import-lsf read a FIFO named lsb.queues (or
// an #INCLUDE of /dev/zero) without end. Each is refused as not a regular
// file; the rest of the directory is imported.
func TestImportRegularFilesOnly(t *testing.T) {
	dir := t.TempDir()
	if err := unix.Mkfifo(filepath.Join(dir, "lsb.queues"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "lsb.users"), []byte("#INCLUDE \"/dev/zero\"\nBegin UserGroup\nGROUP_NAME GROUP_MEMBER\ng1 (a b)\nEnd UserGroup\n"), 0o644)
	huge, err := os.Create(filepath.Join(dir, "lsb.hosts"))
	if err != nil {
		t.Fatal(err)
	}
	huge.Truncate(config.MaxFileSize + 1)
	huge.Close()
	text, notes, err := Import(dir)
	if err != nil {
		t.Fatal(err)
	}
	report := reportText(notes)
	for _, want := range []string{
		"lsb.hosts: policy lost: cannot be read: ",
		"too large for a configuration file",
		"lsb.queues: policy lost: cannot be read: ",
		"not a regular file (a FIFO)",
		"lsb.users:1: #INCLUDE: policy lost: cannot read the included file: /dev/zero: not a regular file (a character device)",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if !strings.Contains(text, "[user_groups.g1]") {
		t.Errorf("the readable file is not imported:\n%s", text)
	}
}
