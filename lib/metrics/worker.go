package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"xce/lib/agent"
)

// Worker is an execution host's metrics (xced worker --metrics), read
// from its agent when scraped.
type Worker struct {
	probe *agent.Probe
}

// NewWorker registers the worker's metrics in r, read from probe.
func NewWorker(r *Registry, probe *agent.Probe) *Worker {
	w := &Worker{probe: probe}
	r.MustRegister(w)
	return w
}

var (
	descWConnected = prometheus.NewDesc("xce_worker_connected",
		"1 while the worker has a session with the controller.", nil, nil)
	descWPending = prometheus.NewDesc("xce_worker_unacknowledged_reports",
		"Job reports the controller has not acknowledged yet.", nil, nil)
	descWSlots = prometheus.NewDesc("xce_worker_slots",
		"The host's job slots as the worker registered them.", nil, nil)
	descWJobs = prometheus.NewDesc("xce_worker_jobs",
		"Jobs the worker runs now (running or suspended).", nil, nil)
	descWTasks = prometheus.NewDesc("xce_worker_tasks",
		"blaunch tasks running on this host.", nil, nil)
	descWCPU = prometheus.NewDesc("xce_worker_jobs_cpu_seconds",
		"CPU time of the jobs running now, from their latest usage samples.", nil, nil)
	descWMem = prometheus.NewDesc("xce_worker_jobs_memory_bytes",
		"Resident memory of the jobs running now, from their latest usage samples.", nil, nil)
)

// Describe is prometheus.Collector's.
func (w *Worker) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descWConnected, descWPending, descWSlots, descWJobs, descWTasks, descWCPU, descWMem} {
		ch <- d
	}
}

// Collect is prometheus.Collector's.
func (w *Worker) Collect(ch chan<- prometheus.Metric) {
	s := w.probe.Read()
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	conn := 0.0
	if s.Connected {
		conn = 1
	}
	gauge(descWConnected, conn)
	gauge(descWPending, float64(s.PendingReports))
	gauge(descWSlots, float64(s.Slots))
	gauge(descWJobs, float64(s.Jobs))
	gauge(descWTasks, float64(s.Tasks))
	gauge(descWCPU, s.CPUSeconds)
	gauge(descWMem, float64(s.MemBytes))
}
