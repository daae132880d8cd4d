package metrics

import "github.com/prometheus/client_golang/prometheus"

// Provisioner is a provisioner daemon's metrics (xced provisioner
// --metrics), read from its agent when scraped.
type Provisioner struct {
	probe func() (connected bool, providers int)
}

// NewProvisioner registers the provisioner's metrics in r, read from
// probe (lib/provision's Agent.Probe).
func NewProvisioner(r *Registry, probe func() (connected bool, providers int)) *Provisioner {
	p := &Provisioner{probe: probe}
	r.MustRegister(p)
	return p
}

var (
	descPConnected = prometheus.NewDesc("xce_provisioner_connected",
		"1 while the controller answers the provisioner's heartbeats.", nil, nil)
	descPProviders = prometheus.NewDesc("xce_provisioner_providers",
		"Providers whose lease this provisioner holds and serves.", nil, nil)
)

// Describe is prometheus.Collector's.
func (p *Provisioner) Describe(ch chan<- *prometheus.Desc) {
	ch <- descPConnected
	ch <- descPProviders
}

// Collect is prometheus.Collector's.
func (p *Provisioner) Collect(ch chan<- prometheus.Metric) {
	up, n := p.probe()
	conn := 0.0
	if up {
		conn = 1
	}
	ch <- prometheus.MustNewConstMetric(descPConnected, prometheus.GaugeValue, conn)
	ch <- prometheus.MustNewConstMetric(descPProviders, prometheus.GaugeValue, float64(n))
}
