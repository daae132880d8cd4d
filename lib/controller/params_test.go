package controller

import (
	"strings"
	"testing"
)

// TestInfoParameters: Info carries the lsb.params values in force by
// their LSF names (bparams -a and -l) and the configured resources
// (lsinfo).
func TestInfoParameters(t *testing.T) {
	c, _ := newTestControllerWith(t, `
[cluster]
default_queue = "normal"
clean_period = "2h"
max_array_size = 500
orphan_job_term_grace_period = "90s"

[resources.scratch]
description = "Scratch space (GB)"

[resources.lic]
type = "boolean"

[queues.normal]
`, 2, 0)
	info := c.Info(Caller{})
	var got []string
	for _, p := range info.Parameters {
		got = append(got, p.Name+"="+p.Value)
	}
	want := "DEFAULT_QUEUE=normal DEFAULT_PROJECT=default MBD_SLEEP_TIME=1 SBD_SLEEP_TIME=1 JOB_ACCEPT_INTERVAL=0 " +
		"CLEAN_PERIOD=7200 MAX_JOB_ARRAY_SIZE=500 JOB_TERMINATE_INTERVAL=10 EADMIN_TRIGGER_DURATION=1 " +
		"ORPHAN_JOB_TERM_GRACE_PERIOD=90 LOCAL_MAX_PREEXEC_RETRY=2147483647 LOCAL_MAX_PREEXEC_RETRY_ACTION=SUSPEND RESOURCE_RESERVE_PER_TASK=N RESOURCE_RESERVE_PER_SLOT=N ABS_RUNLIMIT=Y"
	if strings.Join(got, " ") != want {
		t.Errorf("parameters\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if len(info.Resources) != 2 || info.Resources[0].Name != "lic" || info.Resources[0].Kind != "Boolean" ||
		info.Resources[1].Name != "scratch" || info.Resources[1].Kind != "Numeric" || info.Resources[1].Description != "Scratch space (GB)" {
		t.Errorf("resources %v", info.Resources)
	}
}
