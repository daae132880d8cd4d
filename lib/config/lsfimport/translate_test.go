package lsfimport

import (
	"os"
	"path/filepath"
	"testing"
)

const sharedWithLicences = `Begin Cluster
ClusterName
c1
End Cluster
Begin Resource
RESOURCENAME  TYPE     INTERVAL INCREASING CONSUMABLE DESCRIPTION
matlab_lic    Numeric  ()       N          Y          (MATLAB licences)
verilog       Numeric  ()       N          Y          (Verilog licences)
bigmem        Boolean  ()       ()         ()         (big memory)
End Resource
`

const clusterHosts = `Begin Host
HOSTNAME  model        type   server  RESOURCES
hostA     Intel_EM64T  X86_64 1       (bigmem)
hostB     PC6000       X86_64 1       ()
hostC     !            !      1       ()
End Host
`

// TestTranslate imports one construct at a time; each case's xce.toml and
// report are a golden file (testdata/cases/NAME.golden, "go test -update"
// rewrites them), and the text loads (its [[limits]] as TOML, and as
// xce.toml once lib/config knows them).
func TestTranslate(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
	}{
		{"limit_vertical", map[string]string{"lsf.conf": "LSF_UNIT_FOR_LIMITS=MB\n", "lsf.shared": sharedWithLicences, "lsb.resources": `
Begin Limit
NAME                = per_host_mem
USERS               = alice ~bob
PER_HOST            = all
SLOTS               = 8
SLOTS_PER_PROCESSOR = 1.5
MEM                 = 20%
SWP                 = 4096
TMP                 = 10240
JOBS                = 20
RESOURCE            = [matlab_lic,2] [verilog,1]
End Limit
Begin Limit
NAME         = licences_per_project
PER_PROJECT  = chem physics
LIC_PROJECTS = lp1
PER_APP      = fluent catia
QUEUES       = short
PER_USER     = all
RESOURCE     = [matlab_lic,4]
End Limit
`, "lsb.queues": "Begin Queue\nQUEUE_NAME = normal\nEnd Queue\nBegin Queue\nQUEUE_NAME = short\nEnd Queue\n",
			"lsb.applications": "Begin Application\nNAME = fluent\nEnd Application\nBegin Application\nNAME = catia\nEnd Application\n"}},
		{"limit_horizontal", map[string]string{"lsf.conf": "LSF_UNIT_FOR_LIMITS=GB\n", "lsb.resources": `
Begin Limit
NAME      USERS         QUEUES   HOSTS     PER_PROJECT  SLOTS  MEM  JOBS
cap1      (alice bob)   normal   -         -            10     -    -
cap2      -             -        all       (p1 p2)      -      2    5
-         all           short    -         -            4      -    -
End Limit
`, "lsb.queues": "Begin Queue\nQUEUE_NAME = normal\nEnd Queue\nBegin Queue\nQUEUE_NAME = short\nEnd Queue\n"}},
		{"limit_loss", map[string]string{"lsf.shared": sharedWithLicences, "lsb.resources": `
Begin Limit
NAME               = pend
USERS              = alice
SLOTS              = 4
ELIGIBLE_PEND_JOBS = 10
End Limit
Begin Limit
NAME     = nolic
PER_USER = all
RESOURCE = [nosuch,1]
End Limit
Begin Limit
NAME  = big
USERS = alice
SLOTS = 99999999999
End Limit
`}},
		{"interactive", map[string]string{"lsb.queues": `
Begin Queue
QUEUE_NAME  = normal
INTERACTIVE = YES
End Queue
Begin Queue
QUEUE_NAME  = batch
INTERACTIVE = NO
End Queue
Begin Queue
QUEUE_NAME  = inter
INTERACTIVE = ONLY
End Queue
Begin Queue
QUEUE_NAME  = odd
INTERACTIVE = SOMETIMES
End Queue
`}},
		{"pjob_limit", map[string]string{"lsb.queues": `
Begin Queue
QUEUE_NAME = normal
PJOB_LIMIT = 2
End Queue
Begin Queue
QUEUE_NAME = half
PJOB_LIMIT = 0.5
End Queue
Begin Queue
QUEUE_NAME = bad
PJOB_LIMIT = many
End Queue
`}},
		{"jlu", map[string]string{"lsf.shared": sharedWithLicences, "lsf.cluster.c1": clusterHosts, "lsb.hosts": `
Begin Host
HOST_NAME  MXJ  JL/U
default    4    1
hostA      8    2
X86_64     16   3
End Host
`}},
		{"cpu_factor", map[string]string{"lsf.shared": sharedWithLicences + `
Begin HostModel
MODELNAME     CPUFACTOR   ARCHITECTURE
Intel_EM64T   60.0        (x86_64_Intel_Xeon)
PC6000        116.1       ()
End HostModel
`, "lsf.cluster.c1": clusterHosts}},
		{"runtime", map[string]string{"lsb.applications": `
Begin Application
NAME    = sim
RUNTIME = 1:30
End Application
`, "lsb.queues": `
Begin Queue
QUEUE_NAME = normal
RUNTIME    = 45
End Queue
`}},
		{"resourcemap_all", map[string]string{"lsf.shared": sharedWithLicences, "lsf.cluster.c1": clusterHosts + `
Begin ResourceMap
RESOURCENAME  LOCATION
matlab_lic    (10@[all])
verilog       (x@[all])
End ResourceMap
`, "lsb.applications": `
Begin Application
NAME    = matlab
RES_REQ = rusage[matlab_lic=1]
End Application
Begin Application
NAME    = vlog
RES_REQ = rusage[verilog=1]
End Application
`}},
		{"elim_resources", map[string]string{"lsf.shared": `Begin Cluster
ClusterName
c1
End Cluster
Begin Resource
RESOURCENAME  TYPE     INTERVAL INCREASING CONSUMABLE DESCRIPTION
scratch       Numeric  60       N          ()         (free scratch MB)
lic_left      Numeric  30       N          N          (licences left)
fs_state      String   120      ()         ()         (file system state)
bigmem        Boolean  ()       ()         ()         (big memory)
End Resource
`, "lsf.cluster.c1": clusterHosts + `
Begin ResourceMap
RESOURCENAME  LOCATION
scratch       ([hostA] [hostB])
fs_state      ([default])
End ResourceMap
`}},
		{"cgroups", map[string]string{"lsf.conf": "LSF_PROCESS_TRACKING=Y\nLSF_LINUX_CGROUP_ACCT=N\nLSB_RESOURCE_ENFORCE=\"cpu memory disk\"\n"}},
		{"cgroups_off", map[string]string{"lsf.conf": "LSF_PROCESS_TRACKING=n\nLSF_LINUX_CGROUP_ACCT=maybe\n"}},
		{"unit_kb", map[string]string{"lsf.conf": "LSF_UNIT_FOR_LIMITS=KB\n", "lsb.queues": `
Begin Queue
QUEUE_NAME = normal
RES_REQ    = select[mem>4000000] rusage[mem=500000]
MEMLIMIT   = 1048576
End Queue
`}},
		{"unit_unset", map[string]string{"lsb.queues": "Begin Queue\nQUEUE_NAME = normal\nEnd Queue\n"}},
		{"max_user_priority", map[string]string{"lsb.params": `
Begin Parameters
MAX_USER_PRIORITY = 100
End Parameters
`}},
		{"max_user_priority_bad", map[string]string{"lsb.params": `
Begin Parameters
MAX_USER_PRIORITY = 99999999999
End Parameters
`}},
		{"user_group_limits", map[string]string{"lsb.users": `
Begin UserGroup
GROUP_NAME  GROUP_MEMBER
chem        (alice bob)
End UserGroup
Begin User
USER_NAME  MAX_JOBS  JL/P  MAX_PEND_JOBS
alice      10        -     -
chem       12        -     -
chem@      3         -     50
End User
`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, text := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			text, report, err := Import(dir)
			if err != nil {
				t.Fatal(err)
			}
			withoutLimits(t, text) // the whole text is TOML
			golden(t, filepath.Join("cases", tt.name+".golden"), text+"--- report\n"+reportText(report))
		})
	}
}
