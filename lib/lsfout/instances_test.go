package lsfout

import (
	"bytes"
	"testing"

	"xce/lib/api"
)

// instanceHosts are a two-host job's hosts holding fpga instances.
func instanceHosts() []*api.HostSlots {
	return []*api.HostSlots{
		{Host: "hostB", Slots: 2, Instances: []*api.InstanceAlloc{{Resource: "fpga", Names: []string{"fpga0", "fpga1"}}}},
		{Host: "hostC", Slots: 2, Instances: []*api.InstanceAlloc{{Resource: "fpga", Names: []string{"fpga3"}}}},
	}
}

// Goldens of the instances a job holds in bjobs -l and bhist -l.
func TestInstancesGoldens(t *testing.T) {
	j := jobParallel()
	j.ExecHosts = instanceHosts()
	checkGolden(t, "long_instances", writeLong(t, []*api.Job{j}, testJobsOptions()))

	hj, evs := histJob()
	for _, ev := range evs {
		if ev.Type == api.EventType_START && ev.Pid == 0 {
			ev.Hosts = instanceHosts()
		}
	}
	var b bytes.Buffer
	if err := WriteHistoryLong(&b, []*api.Job{hj}, map[string][]*api.Event{"1234": evs}, JobsOptions{Location: testZone}); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "bhist_long_instances", b.String())
}
