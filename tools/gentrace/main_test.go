package main

import (
	"bytes"
	"os"
	"testing"
)

// TestExample: the bundled example is what its command line makes today;
// a change to the generator that moves it must regenerate it.
func TestExample(t *testing.T) {
	want, err := os.ReadFile("../../examples/lublin-10k-256.swf")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := run([]string{"-jobs", "10000", "-procs", "256", "-seed", "1"}, &got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Error("examples/lublin-10k-256.swf differs from: go run ./tools/gentrace -jobs 10000 -procs 256 -seed 1")
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-model", "x"}, {"-procs", "0"}, {"-jobs", "-1"}, {"-nope"}} {
		if err := run(args, &bytes.Buffer{}); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestEstimate(t *testing.T) {
	var b bytes.Buffer
	if err := run([]string{"-jobs", "3", "-procs", "8", "-estimate", "1.5"}, &b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b.Bytes(), []byte("; Conversion: gentrace -jobs 3 -procs 8 -seed 1 -model whole -estimate 1.5\n")) {
		t.Errorf("output:\n%s", b.String())
	}
}
