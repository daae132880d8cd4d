// Package lublin generates synthetic workloads from the Lublin–Feitelson
// model of rigid parallel jobs (U. Lublin and D. G. Feitelson, "The
// workload on parallel supercomputers: modeling the characteristics of
// rigid jobs", J. Parallel and Distributed Computing 63(11), 2003). It
// owns the model's three parts, each drawn from its published
// distribution:
//
//   - size: serial with a fixed probability; otherwise log2 of the size is
//     two-stage uniform (mostly on [ULow, UMed], else on [UMed, UHi], UHi
//     being log2 of the machine), rounded to a power of two with a fixed
//     probability;
//   - run time: its natural log is hyper-gamma, a mix of two gammas whose
//     weight moves towards the longer one as the job gets larger;
//   - arrivals: the log of the inter-arrival time is gamma distributed at
//     rush hour, and a daily cycle (another gamma, over the day's 48 half
//     hours) stretches it when few jobs come.
//
// The same parameters, size and seed give the same jobs, on any machine:
// the only randomness is one math/rand/v2 PCG stream.
package lublin

import (
	"math"
	"math/rand/v2"
	"time"

	"xce/lib/trace"
)

// Params are the model's parameters. The published fits are WholeSample
// (all jobs together, the default), Batch and Interactive.
type Params struct {
	SerialProb float64 // probability of a serial (1-processor) job
	// Pow2Prob is the probability (of all jobs) of a parallel job whose
	// size is rounded to a power of two.
	Pow2Prob float64
	// Log2 of a parallel job's size is uniform on [ULow, UMed] with
	// probability UProb, else on [UMed, UHi]; UHi is log2 of the
	// machine's processors and UMed = UHi - UMedGap.
	ULow, UMedGap, UProb float64
	// The log of the run time (in seconds) is gamma(A1, B1) with
	// probability p = PA*size + PB (held to [0, 1]), else gamma(A2, B2)
	// (shape, scale).
	A1, B1, A2, B2, PA, PB float64
	// The log of the inter-arrival time (seconds) at rush hour is
	// gamma(AArr, BArr); the share of the day's jobs that arrive in each
	// half hour follows gamma(ANum, BNum) over the half hours numbered
	// from 05:00 (the 11th) round to 05:00 the next day.
	AArr, BArr, ANum, BNum float64
}

// The published parameters (Lublin and Feitelson's fits, the rush-hour
// arrival shape multiplied by its all-day ratio ARAR as the model says).
var (
	WholeSample = Params{
		SerialProb: 0.244, Pow2Prob: 0.576,
		ULow: 0.8, UMedGap: 2.5, UProb: 0.86,
		A1: 4.2, B1: 0.94, A2: 312, B2: 0.03, PA: -0.0054, PB: 0.78,
		AArr: 10.2303 * 1.0225, BArr: 0.4871, ANum: 8.1737, BNum: 3.9631,
	}
	Batch = Params{
		SerialProb: 0.2927, Pow2Prob: 0.6686,
		ULow: 1.2, UMedGap: 2, UProb: 0.875,
		A1: 6.57, B1: 0.823, A2: 639.1, B2: 0.0156, PA: -0.003, PB: 0.6986,
		AArr: 6.0415 * 1.0519, BArr: 0.8531, ANum: 6.1271, BNum: 5.2740,
	}
	Interactive = Params{
		SerialProb: 0.1541, Pow2Prob: 0.625,
		ULow: 1, UMedGap: 2.5, UProb: 0.705,
		A1: 3.8351, B1: 0.6605, A2: 7.073, B2: 0.6856, PA: -0.0118, PB: 0.9156,
		AArr: 6.5510 * 0.9797, BArr: 0.6621, ANum: 8.9186, BNum: 3.6680,
	}
)

// The model's bounds: a drawn log run time above maxLogRun (e^12 s, about
// two days) or log inter-arrival above maxLogArrival (e^13 s, about five
// days) is drawn again.
const (
	maxLogRun     = 12
	maxLogArrival = 13
	buckets       = 48 // half hours in a day
	bucketSec     = 86400 / buckets
	// cycleStart is the first half hour (1-based: 05:00-05:30) of the
	// daily cycle's gamma: the fitted day runs from 05:00 to 05:00.
	cycleStart = 11
)

// Generate makes n jobs for a machine of maxProcs processors with the
// whole-sample parameters.
func Generate(n, maxProcs int, seed uint64) []trace.Job {
	return WholeSample.Generate(n, maxProcs, seed)
}

// Generate makes n jobs for a machine of maxProcs processors: ids 1..n,
// the first submitted at 0 (midnight), run times in whole seconds (at
// least 1), all by user "u1" in the default queue, with no requested
// time (the model has none).
func (p Params) Generate(n, maxProcs int, seed uint64) []trace.Job {
	maxProcs = max(maxProcs, 1)
	g := gen{p: p, r: rand.New(rand.NewPCG(seed, 0x4c75626c696e3033)), weights: dailyWeights(p.ANum, p.BNum)}
	g.uHi = math.Log2(float64(maxProcs))
	g.uMed = max(g.uHi-p.UMedGap, p.ULow)
	g.maxProcs = maxProcs
	jobs := make([]trace.Job, n)
	for i := range jobs {
		submit := g.clock
		slots := g.size()
		jobs[i] = trace.Job{
			ID:     int64(i + 1),
			Submit: time.Duration(math.Floor(submit)) * time.Second,
			Run:    g.runTime(slots),
			Slots:  slots,
			User:   "u1",
		}
		g.advance()
	}
	return jobs
}

type gen struct {
	p         Params
	r         *rand.Rand
	weights   [buckets]float64
	uHi, uMed float64
	maxProcs  int
	clock     float64 // seconds since the start
	bucket    int     // the half hour the clock is in
	frac      float64 // how far into it, 0..1
}

// size draws a job's processors.
func (g *gen) size() int {
	u := g.r.Float64()
	if u < g.p.SerialProb {
		return 1
	}
	var lo, hi float64
	if g.r.Float64() < g.p.UProb {
		lo, hi = g.p.ULow, g.uMed
	} else {
		lo, hi = g.uMed, g.uHi
	}
	l := lo + (hi-lo)*g.r.Float64()
	if u < g.p.SerialProb+g.p.Pow2Prob {
		l = math.Round(l)
	}
	return min(max(int(math.Round(math.Exp2(l))), 1), g.maxProcs)
}

// runTime draws a run time for a job of the given size.
func (g *gen) runTime(size int) time.Duration {
	p := min(max(g.p.PA*float64(size)+g.p.PB, 0), 1)
	a, b := g.p.A2, g.p.B2
	if g.r.Float64() < p {
		a, b = g.p.A1, g.p.B1
	}
	l := g.gamma(a, b)
	for l > maxLogRun {
		l = g.gamma(a, b)
	}
	sec := max(math.Round(math.Exp(l)), 1)
	return time.Duration(sec) * time.Second
}

// advance moves the clock on by one inter-arrival time. The drawn time
// is rush-hour time: it is spent in "points", a half hour costing its
// weight (the share of the day's jobs that arrive in it, 1 on average),
// so that the clock runs through the quiet hours fast.
func (g *gen) advance() {
	l := g.gamma(g.p.AArr, g.p.BArr)
	for l > maxLogArrival {
		l = g.gamma(g.p.AArr, g.p.BArr)
	}
	points := math.Exp(l) / bucketSec
	for {
		w := g.weights[g.bucket]
		if cost := (1 - g.frac) * w; points > cost {
			points -= cost
			g.clock += (1 - g.frac) * bucketSec
			g.frac = 0
			g.bucket = (g.bucket + 1) % buckets
			continue
		}
		d := points / w
		g.frac += d
		g.clock += d * bucketSec
		return
	}
}

// gamma draws from gamma(shape a, scale b) by Marsaglia and Tsang's
// method (a < 1 through a+1 and the power of a uniform).
func (g *gen) gamma(a, b float64) float64 {
	boost := 1.0
	if a < 1 {
		boost = math.Pow(1-g.r.Float64(), 1/a) // 1-U: never 0
		a++
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := g.r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := 1 - g.r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v * b * boost
		}
	}
}

// dailyWeights gives each half hour of the day its share of the day's
// arrivals, normalised to a mean of 1: half hour i (1-based, counted
// cyclically from cycleStart) gets the mass of gamma(a, b) on
// [i-0.5, i+0.5].
func dailyWeights(a, b float64) [buckets]float64 {
	var w [buckets]float64
	sum := 0.0
	for i := cycleStart; i < cycleStart+buckets; i++ {
		m := gammaMass(a, b, float64(i)-0.5, float64(i)+0.5)
		w[(i-1)%buckets] = m
		sum += m
	}
	for i := range w {
		w[i] /= sum / buckets
	}
	return w
}

// gammaMass integrates the density of gamma(shape a, scale b) over
// [lo, hi] (Simpson's rule; the density is smooth there).
func gammaMass(a, b, lo, hi float64) float64 {
	lg, _ := math.Lgamma(a)
	pdf := func(x float64) float64 {
		if x <= 0 {
			return 0
		}
		return math.Exp((a-1)*math.Log(x) - x/b - lg - a*math.Log(b))
	}
	const steps = 64
	h := (hi - lo) / steps
	s := pdf(lo) + pdf(hi)
	for k := 1; k < steps; k++ {
		f := 2.0
		if k%2 == 1 {
			f = 4
		}
		s += f * pdf(lo+float64(k)*h)
	}
	return s * h / 3
}
