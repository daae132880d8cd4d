package config

import (
	"strings"
	"testing"
)

func TestParseLimitAmount(t *testing.T) {
	cases := []struct {
		in   any
		want LimitAmount
		err  string
	}{
		{in: int64(100), want: LimitAmount{MB: 100}},
		{in: 2.5, want: LimitAmount{MB: 2.5}},
		{in: "10G", want: LimitAmount{MB: 10240}},
		{in: "512MB", want: LimitAmount{MB: 512}},
		{in: "1024KB", want: LimitAmount{MB: 1}},
		{in: "300", want: LimitAmount{MB: 300}},
		{in: "20%", want: LimitAmount{Percent: 20}},
		{in: " 12.5 %", want: LimitAmount{Percent: 12.5}},
		{in: "0%", err: "percentage must be above 0"},
		{in: "101%", err: "at most 100"},
		{in: "-5", err: "between 0 and"},
		{in: "5XB", err: "unknown unit"},
		{in: "lots", err: "not an amount"},
		{in: true, err: "expected an amount"},
		{in: int64(1) << 50, err: "between 0 and"},
	}
	for _, c := range cases {
		got, err := parseLimitAmount(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want one with %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%v: got %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}

func FuzzParseLimitAmount(f *testing.F) {
	for _, s := range []string{"10G", "20%", "300", "1.5TB", "%", "-1%", "1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := parseLimitAmount(s)
		if err != nil {
			return
		}
		if a.MB < 0 || a.Percent < 0 || a.Percent > 100 || (a.MB > 0 && a.Percent > 0) {
			t.Fatalf("%q gave %+v", s, a)
		}
	})
}

// TestLimitsLoad: a configuration with limits loads, each list and
// amount where the scheduler reads it.
func TestLimitsLoad(t *testing.T) {
	c, err := Parse("x.toml", []byte(`
[hosts.a]
[queues.normal]
[[limits]]
name = "l"
per_user = ["all"]
per_host = ["a"]
slots = 0
mem = "50%"
`))
	if err != nil {
		t.Fatal(err)
	}
	l := c.Limits[0]
	if l.Slots == nil || *l.Slots != 0 || l.Amounts["mem"] != (LimitAmount{Percent: 50}) || l.PerUser[0] != "all" {
		t.Errorf("got %+v", l)
	}
}
