package data

import (
	"math"
	"strings"
	"testing"
)

func TestValidateBoundsClasses(t *testing.T) {
	d := ringDataset(10, 2, 3)
	d.NumClasses = 10
	if err := d.Validate(); err != nil {
		t.Fatalf("as many classes as nodes: %v", err)
	}
	d.NumClasses = 2_000_000_000
	err := d.Validate()
	if err == nil || !strings.Contains(err.Error(), "2000000000 classes for 10 nodes") {
		t.Fatalf("2e9 classes for 10 nodes: %v", err)
	}
}

func TestValidateRefusesNonFiniteFeatures(t *testing.T) {
	for _, v := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		d := ringDataset(10, 3, 2)
		d.X[3*6+2] = v
		d.X[3*8] = v // a later row: the first one is named
		err := d.Validate()
		if err == nil || !strings.Contains(err.Error(), "feature row 6, column 2 is") {
			t.Errorf("%v at node 6: %v", v, err)
		}
	}
	d := ringDataset(10, 3, 2)
	d.X[0] = math.MaxFloat32
	d.X[1] = -math.SmallestNonzeroFloat32
	if err := d.Validate(); err != nil {
		t.Errorf("finite extremes refused: %v", err)
	}
}
