package config_test

import (
	"fmt"

	"xce/lib/api"
	"xce/lib/config"
)

func ExampleLayer() {
	cfg, err := config.Load("testdata/example.toml")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := config.Layer(&api.JobSpec{Command: "fluent -g", App: "fluent", Project: "genome",
		ResReq: []string{"select[bigmem]"}, RunLimitSec: 4 * 3600}, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	e := res.Effective
	fmt.Println("queue:", e.Queue, "from", res.Origin["queue"])
	fmt.Println("tasks:", e.MinTasks, "from", res.Origin["min_tasks"])
	fmt.Println("res_req:", e.ResReq[0], "from", res.Origin["res_req"])
	fmt.Println("run limit:", config.Duration(e.RunLimitSec), "from", res.Origin["run_limit_sec"])
	fmt.Println("memory limit:", config.Memory(e.MemLimitKb), "from", res.Origin["mem_limit_kb"])
	fmt.Println("pre-exec:", res.Exec.PreExec)
	for _, p := range res.Pend {
		fmt.Printf("limit of %s: the job takes %d of %d, or pends with %q\n", p.Name, p.Need, p.Max, p.Reason)
	}

	_, err = config.Layer(&api.JobSpec{Command: "big", Queue: "short", MemLimitKb: 512 << 20}, cfg)
	fmt.Printf("%v. Job not submitted.\n", err)
	// Output:
	// queue: normal from default
	// tasks: 4 from profile fluent
	// res_req: select[bigmem && os_version == rhel9] rusage[mem=8GB:verilog=1] span[hosts=1] from job + profile fluent
	// run limit: 4h from job
	// memory limit: 128GB from profile fluent
	// pre-exec: [/opt/site/bin/fluent-license-check]
	// limit of genome: the job takes 134217728 of 2147483648, or pends with "Project genome has reached its quota of 2 TB memory"
	// limit of verilog: the job takes 1 of 20, or pends with "Job's requirements for reserving resource (verilog) not satisfied"
	// limit of normal: the job takes 4 of 64, or pends with "User has reached the per-user job slot limit of the queue"
	// limit of genome: the job takes 4 of 200, or pends with "Project genome has reached its quota of 200 job slots"
	// Job requests 512 GB memory; queue short allows at most 64 GB. Job not submitted.
}
