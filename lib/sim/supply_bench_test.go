package sim

import (
	"testing"

	"xce/lib/trace"
	"xce/lib/trace/lublin"
)

// BenchmarkSimulateTemplates10k256: 10,000 Lublin jobs on 256 one-slot
// hosts, with a template of 32 instances of 8 slots ("templates": demand
// computed after every cycle) beside the same run without it ("static",
// the reference measured in the same run).
func BenchmarkSimulateTemplates10k256(b *testing.B) {
	const jobs, hosts = 10_000, 256
	tr := &trace.Trace{Format: trace.SWF, Jobs: lublin.Generate(jobs, hosts, 29)}
	for _, c := range []struct{ name, conf string }{
		{"static", "[cluster]\nname = \"t\"\ndefault_queue = \"normal\"\n[queues.normal]\n"},
		{"templates", "[cluster]\nname = \"t\"\ndefault_queue = \"normal\"\n[queues.normal]\nrc_hosts = [\"cloud\"]\n" +
			"[providers.local]\nkind = \"local\"\n[templates.cloud]\nprovider = \"local\"\nmax = 32\nslots = 8\nprice = 0.4\n"},
	} {
		conf := mustConfig(b, c.conf)
		b.Run(c.name, func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				r, err := Run(tr, Options{Config: conf, Hosts: hosts, Slots: 1})
				if err != nil {
					b.Fatal(err)
				}
				if s := Summarise(r); s.Jobs != jobs {
					b.Fatalf("%d of %d jobs ran", s.Jobs, jobs)
				}
			}
			cpu := cpuTime() - cpu0
			b.ReportMetric(float64(b.N*jobs)/b.Elapsed().Seconds(), "jobs/s")
			b.ReportMetric(float64(b.N*jobs)/cpu.Seconds(), "jobs/cpu-s")
		})
	}
}
