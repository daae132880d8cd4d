package lsfimport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"xce/lib/config"
)

const rcShared = `Begin Cluster
ClusterName
c1
End Cluster
Begin Resource
RESOURCENAME  TYPE     INTERVAL INCREASING CONSUMABLE DESCRIPTION
awshost       Boolean  ()       ()         ()         (cloud host)
gpuhost       Boolean  ()       ()         ()         (GPU host)
zone          String   ()       ()         ()         (availability zone)
scratch       Numeric  ()       N          N          (scratch GB)
End Resource
`

const rcProviders = `{
    "providers": [
        {
            "name": "aws",
            "type": "awsProv",
            "confPath": "resource_connector/aws",
            "scriptPath": "resource_connector/aws",
            "preProvPath": "resource_connector/aws/scripts/pre.sh"
        }
    ]
}
`

const rcAWSTemplates = `{
    "templates": [
        {
            "templateId": "cpu4",
            "maxNumber": 80,
            "attributes": {
                "type": ["String", "X86_64"],
                "ncores": ["Numeric", "2"],
                "ncpus": ["Numeric", "4"],
                "mem": ["Numeric", "16384"],
                "awshost": ["Boolean", "1"],
                "zone": ["String", "us_east_1a"],
                "scratch": ["Numeric", 100],
                "pricing": ["Numeric", "0.17"]
            },
            "imageId": "ami-0123",
            "vmType": "m5.xlarge",
            "priority": 10
        },
        {
            "templateId": "gpu1",
            "maxNumber": 4,
            "attributes": {
                "ncpus": ["Numeric", "8"],
                "ngpus": ["Numeric", "1"],
                "mem": ["Numeric", "65536"],
                "gpuhost": ["Boolean", "1"],
                "awshost": ["Boolean", "0"],
                "nosuch": ["Boolean", "1"],
                "zone": ["Numeric", "3"]
            }
        },
        {"templateId": "off", "maxNumber": 0, "attributes": {}},
        {"templateId": "bad name", "maxNumber": 1},
        {"maxNumber": 2}
    ]
}
`

const rcConf = `LSF_SERVERDIR=/opt/lsf/10.1/linux3.10-glibc2.17-x86_64/etc
LSF_UNIT_FOR_LIMITS=MB
LSB_RC_EXTERNAL_HOST_IDLE_TIME=15
LSB_RC_EXTERNAL_HOST_MAX_TTL=240
LSB_RC_MAX_INSTANCES_PER_TEMPLATE=20
LSB_RC_EXTERNAL_HOST_FLAG="awshost"
LSB_RC_REQUEUE_BUFFER=60
LSB_RC_UPDATE_INTERVAL=10
LSF_MQ_BROKER_HOSTS=master1
`

const rcQueues = `Begin Queue
QUEUE_NAME       = cloud
RC_HOSTS         = awshost
RC_ACCOUNT       = projA
RC_DEMAND_POLICY = THRESHOLD[[1,1]]
End Queue
Begin Queue
QUEUE_NAME = gpu
RC_HOSTS   = all
End Queue
Begin Queue
QUEUE_NAME = local
RC_HOSTS   = none
End Queue
`

// TestResourceConnector imports LSF resource connector configurations:
// hostProviders.json, a provider's templates file, the LSB_RC_*
// parameters and the queues' RC_HOSTS and RC_ACCOUNT. Each case's
// xce.toml and report are a golden file (testdata/cases/rc_NAME.golden),
// and the text loads.
func TestResourceConnector(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		check func(t *testing.T, c *config.Config)
	}{
		{"aws", map[string]string{
			"lsf.conf":                              rcConf,
			"lsf.shared":                            rcShared,
			"lsb.queues":                            rcQueues,
			"resource_connector/hostProviders.json": rcProviders,
			"resource_connector/aws/conf/awsprov_templates.json": rcAWSTemplates,
			"resource_connector/aws/conf/other_templates.json":   `{"templates": []}`,
			"resource_connector/policy_config.json":              `{}`,
		}, func(t *testing.T, c *config.Config) {
			p := c.Providers["aws"]
			if p == nil || p.Kind != "script" || p.ScriptDir != "/opt/lsf/10.1/resource_connector/aws/scripts" {
				t.Errorf("provider aws: %+v", p)
			}
			cpu := c.Templates["cpu4"]
			if cpu == nil || cpu.Max != 20 || cpu.Slots != 4 || cpu.Mem != 16<<20 || cpu.IdleTime != 15*60 || cpu.MaxTTL != 240*60 ||
				cpu.Price != 0.17 || cpu.Type != "X86_64" || cpu.Resources["awshost"] != true || cpu.Resources["zone"] != "us_east_1a" {
				t.Errorf("template cpu4: %+v", cpu)
			}
			gpu := c.Templates["gpu1"]
			if gpu == nil || gpu.Max != 4 || gpu.GPUs != 1 || gpu.Resources["gpuhost"] != true || gpu.Resources["awshost"] != true {
				t.Errorf("template gpu1 (awshost comes from LSB_RC_EXTERNAL_HOST_FLAG): %+v", gpu)
			}
			if len(c.Templates) != 2 {
				t.Errorf("templates: %v", c.Templates)
			}
			if q := c.Queues["cloud"]; q == nil || strings.Join(q.RCHosts, " ") != "awshost" || q.RCAccount != "projA" {
				t.Errorf("queue cloud: %+v", q)
			}
			if q := c.Queues["gpu"]; q == nil || strings.Join(q.RCHosts, " ") != "all" {
				t.Errorf("queue gpu: %+v", q)
			}
			if q := c.Queues["local"]; q == nil || len(q.RCHosts) != 0 {
				t.Errorf("queue local: %+v", q)
			}
		}},
		// LSF's defaults: 60 minutes idle, at most 50 instances per
		// template; hostProviders.json beside lsf.conf, the scripts in
		// scriptPath itself, an absolute confPath's neighbour.
		{"defaults", map[string]string{
			"lsf.conf": "LSF_SERVERDIR=/opt/lsf/10.1/linux/etc\nLSB_RC_DEFAULT_HOST_TYPE=LINUXPPC64\n",
			"hostProviders.json": `{"providers": [
				{"name": "os", "type": "openstackProv", "confPath": "rc/os", "scriptPath": "/site/os-scripts"},
				{"name": "os", "type": "openstackProv", "confPath": "rc/os", "scriptPath": "/x"},
				{"name": "noscripts", "type": "azureProv", "confPath": "rc/az"}
			], "version": 2}`,
			"rc/os/osprov_templates.json": `{"templates": [{"templateId": "small", "maxNumber": 500, "attributes": {"ncpus": ["Numeric", "2"]}}, {"templateId": "nomax"}]}`,
		}, func(t *testing.T, c *config.Config) {
			s := c.Templates["small"]
			if s == nil || s.Max != 50 || s.IdleTime != 3600 || s.MaxTTL != 0 || s.Type != "LINUXPPC64" || c.Providers["os"].ScriptDir != "/site/os-scripts/scripts" {
				t.Errorf("template small: %+v, provider %+v", s, c.Providers["os"])
			}
			if n := c.Templates["nomax"]; n == nil || n.Max != 50 {
				t.Errorf("template nomax: %+v", n)
			}
		}},
		// Parameters without a hostProviders.json are noted; a broken one
		// is a loss.
		{"no_providers", map[string]string{"lsf.conf": "LSB_RC_EXTERNAL_HOST_IDLE_TIME=5\n", "lsb.queues": rcQueues, "lsf.shared": rcShared}, nil},
		{"broken", map[string]string{"lsf.conf": "LSB_RC_EXTERNAL_HOST_IDLE_TIME=x\n",
			"resource_connector/hostProviders.json": `{"providers": [`}, nil},
		// Licence tokens: the resource connector lends hosts only and
		// License Scheduler shares a server's tokens out, so no shared
		// resource borrows (provider, borrow_max, idle_time stay unset): a
		// feature with a ResourceMap total is a note, one without a loss.
		{"licences", map[string]string{
			"lsf.conf":                              "LSF_SERVERDIR=/opt/lsf/10.1/linux/etc\n",
			"lsf.shared":                            rcShared + "Begin Resource\nRESOURCENAME TYPE INTERVAL INCREASING DESCRIPTION\nlic1 Numeric () N (tokens)\nEnd Resource\n",
			"lsf.cluster.c1":                        "Begin ResourceMap\nRESOURCENAME LOCATION\nlic1 (5@[all])\nEnd ResourceMap\n",
			"resource_connector/hostProviders.json": rcProviders,
			"resource_connector/aws/conf/awsprov_templates.json": `{"templates": []}`,
			"lsf.licensescheduler": "Begin Parameters\nPORT=9581\nEnd Parameters\n" +
				"Begin ServiceDomain\nNAME=LanServer\nLIC_SERVERS=((1700@licsrv))\nEnd ServiceDomain\n" +
				"Begin Feature\nNAME=lic1\nDISTRIBUTION=LanServer(p1 1 p2 1)\nEnd Feature\n" +
				"Begin Feature\nNAME=AppZ\nDISTRIBUTION=LanServer(p1 1)\nEnd Feature\n",
		}, func(t *testing.T, c *config.Config) {
			r := c.Resources["lic1"]
			if r == nil || r.Total != 5 || r.Provider != "" || r.BorrowMax != 0 || r.IdleTime != 0 {
				t.Errorf("resource lic1: %+v", r)
			}
			if c.Resources["AppZ"] != nil {
				t.Errorf("AppZ imported: %+v", c.Resources["AppZ"])
			}
		}},
		// A template named as a host, and one a second provider repeats.
		{"clash", map[string]string{
			"lsf.shared":     rcShared,
			"lsf.cluster.c1": "Begin Host\nHOSTNAME model type server RESOURCES\nnode1 ! ! 1 ()\nEnd Host\n",
			"lsb.params":     "Begin Parameters\nLSB_RC_EXTERNAL_HOST_MAX_TTL = 0\nLSB_RC_QUERY_INTERVAL = 15\nEnd Parameters\n",
			"resource_connector/hostProviders.json": `{"providers": [
				{"name": "a", "type": "awsProv", "confPath": "resource_connector/a", "scriptPath": "/a"},
				{"name": "b", "type": "awsProv", "confPath": "resource_connector/b", "scriptPath": "/b"}]}`,
			"resource_connector/a/conf/awsprov_templates.json": `{"templates": [{"templateId": "node1", "maxNumber": 1},
				{"templateId": "t1", "maxNumber": 1.5}, {"templateId": "t1", "maxNumber": 1, "attributes": {"ncpus": ["Numeric", "zero"], "mem": ["Memory", "1"], "scratch": "5"}}]}`,
			"resource_connector/b/conf/awsprov_templates.json": `{"templates": [{"templateId": "t1", "maxNumber": 3}]}`,
		}, func(t *testing.T, c *config.Config) {
			if t1 := c.Templates["t1"]; t1 == nil || t1.Provider != "a" || len(c.Templates) != 1 {
				t.Errorf("templates: %v", c.Templates)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, text := range tt.files {
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
			golden(t, filepath.Join("cases", "rc_"+tt.name+".golden"), text+"--- report\n"+reportText(report))
			c, err := config.Parse("xce.toml", []byte(text))
			if err != nil {
				t.Fatalf("the imported xce.toml does not load:\n%v\n%s", err, text)
			}
			if tt.check != nil {
				tt.check(t, c)
			}
		})
	}
}
