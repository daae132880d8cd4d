package lsfimport

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestImportPreemption: lsb.params' preemption keys become [cluster]'s,
// a queue's own (MAX_JOB_PREEMPT, NO_PREEMPT_*, PREEMPT_DELAY,
// TERMINATE_WHEN) its queue's; lsb.params PREEMPT_DELAY goes to every
// queue without its own; what xce cannot take is noted.
func TestImportPreemption(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		toml  []string
		notes []string
		check func(t *testing.T, text string)
	}{
		{
			name: "lsb.params",
			files: map[string]string{"lsb.params": `Begin Parameters
PREEMPT_FOR = GROUP_MAX LEAST_RUN_TIME optimal_mini_job BOGUS
PREEMPT_JOBTYPE = EXCLUSIVE BACKFILL
PREEMPTABLE_RESOURCES = mem ngpus_physical
PREEMPTION_WAIT_TIME = 600
MAX_JOB_PREEMPT = 3
NO_PREEMPT_RUN_TIME = 30
NO_PREEMPT_FINISH_TIME = 10%
PREEMPT_DELAY = 90
End Parameters
`, "lsb.queues": "Begin Queue\nQUEUE_NAME = q\nEnd Queue\nBegin Queue\nQUEUE_NAME = r\nPREEMPT_DELAY = 30\nEnd Queue\n"},
			toml: []string{
				`preempt_for = ["group_max", "least_run_time", "optimal_mini_job"]`,
				`preempt_jobtype = ["exclusive", "backfill"]`,
				`preemptable_resources = ["mem", "ngpus_physical"]`,
				`preemption_wait_time = "10m"  # PREEMPTION_WAIT_TIME 600 s`,
				`max_job_preempt = 3`,
				`no_preempt_run_time = "30m"  # NO_PREEMPT_RUN_TIME 30 min`,
				`no_preempt_finish_time = "10%"`,
				`preempt_delay = "1m30s"  # lsb.params PREEMPT_DELAY 90 s`,
				`preempt_delay = "30s"  # PREEMPT_DELAY 30 s`,
			},
			notes: []string{"lsb.params:2: PREEMPT_FOR: not translated: BOGUS: use GROUP_JLP, GROUP_MAX"},
		},
		{
			name: "lsb.queues",
			files: map[string]string{"lsb.queues": `Begin Queue
QUEUE_NAME = hi
PRIORITY = 70
PREEMPTION = PREEMPTIVE[lo+2]
End Queue
Begin Queue
QUEUE_NAME = lo
PRIORITY = 10
TERMINATE_WHEN = PREEMPT WINDOW
MAX_JOB_PREEMPT = 2
NO_PREEMPT_RUN_TIME = 50%
NO_PREEMPT_FINISH_TIME = 120
PREEMPT_DELAY = soon
End Queue
`},
			toml: []string{
				`preemptive = ["lo+2"]`,
				`terminate_when = ["preempt"]`,
				`max_job_preempt = 2`,
				`no_preempt_run_time = "50%"`,
				`no_preempt_finish_time = "2h"  # NO_PREEMPT_FINISH_TIME 120 min`,
			},
			notes: []string{
				"lsb.queues:9: TERMINATE_WHEN: not translated: WINDOW: xce ends jobs this way only on preemption",
				`lsb.queues:13: PREEMPT_DELAY: not translated: "soon" is not a number of seconds`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text, report, cfg := importFiles(t, tc.files)
			for _, want := range tc.toml {
				if !strings.Contains(text, want) {
					t.Errorf("xce.toml lacks %q:\n%s", want, text)
				}
			}
			for _, want := range tc.notes {
				if !strings.Contains(report, want) {
					t.Errorf("report lacks %q:\n%s", want, report)
				}
			}
			switch tc.name {
			case "lsb.params":
				p := cfg.Cluster.Preemption
				if !slices.Equal(p.PreemptFor, []string{"group_max", "least_run_time", "optimal_mini_job"}) || p.MaxJobPreempt != 3 ||
					time.Duration(p.PreemptionWaitTime)*time.Second != 10*time.Minute {
					t.Errorf("loaded cluster preemption: %+v", p)
				}
				if d := cfg.Queues["q"].PreemptDelay; d != 90 {
					t.Errorf("queue q's preempt_delay %v, want 90 s from lsb.params", d)
				}
			case "lsb.queues":
				lo := cfg.Queues["lo"]
				if !lo.TerminateOnPreempt() || lo.MaxJobPreempt != 2 || lo.NoPreemptRunTime != "50%" {
					t.Errorf("loaded queue lo: %+v", lo.QueuePreemption)
				}
			}
		})
	}
}
