package resreq

import (
	"reflect"
	"testing"
)

func TestUsageSections(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want [][]string
	}{
		{"select[mem>1]", nil},
		{"rusage[mem=100:lic=1, tmp=5]", [][]string{{"mem", "lic", "tmp"}}},
		{"rusage[resource1=1 || resource2=2]", [][]string{{"resource1"}, {"resource2"}}},
		{"{rusage[resource1=1]} || {rusage[resource2=2]}", [][]string{{"resource1"}, {"resource2"}}},
		{"2*{rusage[mem=10]} + 4*{rusage[lic=1]}", [][]string{{"mem"}, {"lic"}}},
	} {
		r, err := Parse(tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if got := r.UsageSections(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.in, got, tc.want)
		}
	}
}
