package sched

import (
	"reflect"
	"testing"

	"xce/lib/resreq"
)

// TestFillPlacedWritesEveryField: fillPlaced writes each allocation field
// by field over a recycled list, so every field of HostAlloc it does not
// set from the pick must be cleared there. Over a list whose every field
// is set (found by reflection, so a field added later is set too), it
// gives exactly the allocations a struct literal would.
func TestFillPlacedWritesEveryField(t *testing.T) {
	c := &cycle{s: &Snapshot{Hosts: []Host{{Name: "a"}, {Name: "b"}, {Name: "c"}}}}
	set := resreq.UsageSet{{}}
	out := make([]HostAlloc, 3)
	for i := range out {
		v := reflect.ValueOf(&out[i]).Elem()
		for f := 0; f < v.NumField(); f++ {
			fv := v.Field(f)
			switch fv.Kind() {
			case reflect.String:
				fv.SetString("stale")
			case reflect.Int:
				fv.SetInt(99)
			case reflect.Bool:
				fv.SetBool(true)
			case reflect.Pointer:
				fv.Set(reflect.New(fv.Type().Elem()))
			case reflect.Map:
				fv.Set(reflect.MakeMap(fv.Type()))
			case reflect.Slice:
				fv.Set(reflect.MakeSlice(fv.Type(), 1, 1))
			default:
				t.Fatalf("HostAlloc.%s: a %s this test cannot set; extend it", v.Type().Field(f).Name, fv.Kind())
			}
		}
	}
	got := c.fillPlaced(out[:1], []pick{{h: 2, n: 4}, {h: 0, n: 1}}, set)
	want := []HostAlloc{out[0] /* before the placement: left alone */, {Host: "c", Slots: 4, Rusage: set, Lead: true}, {Host: "a", Slots: 1, Rusage: set}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fillPlaced left stale fields:\n got %+v\nwant %+v", got, want)
	}
	if !reflect.DeepEqual(c.placedIdx, []int{2, 0}) {
		t.Errorf("placedIdx = %v, want [2 0]", c.placedIdx)
	}
}
