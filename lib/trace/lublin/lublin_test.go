package lublin

import (
	"bytes"
	"math"
	"math/bits"
	"testing"
	"time"

	"xce/lib/trace"
)

// TestModelStatistics: a large sample has the shares and means the model
// says it should.
func TestModelStatistics(t *testing.T) {
	const n, procs = 40000, 256
	p := WholeSample
	jobs := Generate(n, procs, 1)
	if len(jobs) != n {
		t.Fatalf("%d jobs", len(jobs))
	}
	serial, pow2 := 0, 0
	var logRun, wantLogRun float64
	var byHour [24]int
	for i, j := range jobs {
		if j.ID != int64(i+1) || j.Slots < 1 || j.Slots > procs || j.Run < time.Second {
			t.Fatalf("job %+v", j)
		}
		if i > 0 && j.Submit < jobs[i-1].Submit {
			t.Fatalf("job %d submitted before job %d", j.ID, i)
		}
		if j.Slots == 1 {
			serial++
		} else if bits.OnesCount(uint(j.Slots)) == 1 {
			pow2++
		}
		logRun += math.Log(j.Run.Seconds())
		mix := min(max(p.PA*float64(j.Slots)+p.PB, 0), 1)
		wantLogRun += mix*p.A1*p.B1 + (1-mix)*p.A2*p.B2
		byHour[int(j.Submit.Hours())%24]++
	}
	near := func(what string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol {
			t.Errorf("%s: %.4f, the model says %.4f (±%.3f)", what, got, want, tol)
		}
	}
	t.Logf("serial %.4f pow2 %.4f/%.4f logrun %.3f/%.3f hours %v", float64(serial)/n, float64(pow2)/n, pow2Share(p, procs), logRun/n, wantLogRun/n, byHour)
	near("serial share", float64(serial)/n, p.SerialProb, 0.015)
	near("power-of-two parallel share", float64(pow2)/n, pow2Share(p, procs), 0.015)
	near("mean log run time", logRun/n, wantLogRun/n, 0.1)
	// The daily cycle: the working day gets far more jobs than the night.
	day, night := 0, 0
	for h := 10; h < 16; h++ {
		day += byHour[h]
	}
	for h := 0; h < 6; h++ {
		night += byHour[h]
	}
	if day < 2*night {
		t.Errorf("10:00-16:00 got %d jobs, 00:00-06:00 %d: no daily cycle", day, night)
	}
}

// pow2Share is the share of jobs with a power-of-two size above 1: those
// rounded so, and those whose size falls on one anyway.
func pow2Share(p Params, procs int) float64 {
	hi := math.Log2(float64(procs))
	med := hi - p.UMedGap
	falls := 0.0
	const steps = 100000
	for _, part := range []struct{ lo, hi, w float64 }{{p.ULow, med, p.UProb}, {med, hi, 1 - p.UProb}} {
		in := 0
		for k := range steps {
			l := part.lo + (part.hi-part.lo)*(float64(k)+0.5)/steps
			s := int(math.Round(math.Exp2(l)))
			if s > 1 && bits.OnesCount(uint(s)) == 1 {
				in++
			}
		}
		falls += part.w * float64(in) / steps
	}
	return p.Pow2Prob + (1-p.SerialProb-p.Pow2Prob)*falls
}

func TestSameSeedSameBytes(t *testing.T) {
	swf := func(seed uint64) []byte {
		var b bytes.Buffer
		if err := trace.WriteSWF(&b, map[string]string{"MaxProcs": "64"}, Generate(2000, 64, seed)); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a, b, c := swf(7), swf(7), swf(8)
	if !bytes.Equal(a, b) {
		t.Error("the same seed gave different traces")
	}
	if bytes.Equal(a, c) {
		t.Error("different seeds gave the same trace")
	}
	// And it reads back as generated.
	tr, err := trace.ReadSWF(bytes.NewReader(a), "gen")
	if err != nil || len(tr.Jobs) != 2000 || len(tr.Malformed)+len(tr.Skipped) != 0 {
		t.Fatalf("read back: %v %d jobs", err, len(tr.Jobs))
	}
	gen := Generate(2000, 64, 7)
	for i := range gen {
		tr.Jobs[i].Line = 0
		if tr.Jobs[i] != gen[i] {
			t.Fatalf("job %d: read %+v, generated %+v", i, tr.Jobs[i], gen[i])
		}
	}
}

func TestSmallMachines(t *testing.T) {
	for _, procs := range []int{0, 1, 2, 3, 5} {
		for _, p := range []Params{WholeSample, Batch, Interactive} {
			for _, j := range p.Generate(500, procs, 3) {
				if j.Slots < 1 || j.Slots > max(procs, 1) {
					t.Fatalf("%d procs: job of %d", procs, j.Slots)
				}
			}
		}
	}
}
