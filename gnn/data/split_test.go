package data

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// testLabels returns n labels cycling over k classes, every 11th node unlabeled.
func testLabels(n, k int) []int32 {
	y := make([]int32, n)
	for i := range y {
		y[i] = int32(i % k)
		if i%11 == 3 {
			y[i] = -1
		}
	}
	return y
}

func checkDisjoint(t *testing.T, s *Split, labels []int32) {
	t.Helper()
	seen := map[int32]string{}
	for name, list := range map[string][]int32{"train": s.Train, "valid": s.Valid, "test": s.Test} {
		if !slices.IsSorted(list) {
			t.Errorf("%s not sorted", name)
		}
		for _, v := range list {
			if labels[v] < 0 {
				t.Errorf("%s contains unlabeled node %d", name, v)
			}
			if other, ok := seen[v]; ok {
				t.Errorf("node %d in both %s and %s", v, other, name)
			}
			seen[v] = name
		}
	}
}

func TestPerClassSplit(t *testing.T) {
	labels := testLabels(3000, 7)
	s, err := PerClassSplit(labels, 7, 20, 500, 1000, 42)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Train) != 140 || len(s.Valid) != 500 || len(s.Test) != 1000 {
		t.Fatalf("sizes %d/%d/%d, want 140/500/1000", len(s.Train), len(s.Valid), len(s.Test))
	}
	checkDisjoint(t, s, labels)
	perClass := make([]int, 7)
	for _, v := range s.Train {
		perClass[labels[v]]++
	}
	for c, n := range perClass {
		if n != 20 {
			t.Errorf("class %d has %d training nodes, want 20", c, n)
		}
	}
	again, err := PerClassSplit(labels, 7, 20, 500, 1000, 42)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, again) {
		t.Error("same seed gave a different split")
	}
	other, err := PerClassSplit(labels, 7, 20, 500, 1000, 43)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(s.Train, other.Train) {
		t.Error("different seeds gave the same training set")
	}
}

func TestPerClassSplitErrors(t *testing.T) {
	labels := testLabels(300, 3)
	for _, tc := range []struct {
		name                        string
		labels                      []int32
		classes, per, nValid, nTest int
		want                        string
	}{
		{"small class", append(testLabels(100, 2), 2), 3, 20, 10, 10, "class 2 has 1 labeled nodes, need 20"},
		{"not enough left", labels, 3, 20, 100, 200, "need 100 validation + 200 test"},
		{"bad label", []int32{0, 5}, 3, 0, 0, 0, "label 5 of node 1"},
		{"no classes", labels, 0, 1, 1, 1, "0 classes"},
		{"negative", labels, 3, -1, 1, 1, "negative size"},
	} {
		_, err := PerClassSplit(tc.labels, tc.classes, tc.per, tc.nValid, tc.nTest, 1)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to mention %q", tc.name, err, tc.want)
		}
	}
}

func TestFractionSplit(t *testing.T) {
	labels := testLabels(1000, 4)
	labeled := 0
	for _, y := range labels {
		if y >= 0 {
			labeled++
		}
	}
	s, err := FractionSplit(labels, 0.6, 0.2, 7)
	if err != nil {
		t.Fatal(err)
	}
	checkDisjoint(t, s, labels)
	total := len(s.Train) + len(s.Valid) + len(s.Test)
	if total != labeled {
		t.Errorf("split covers %d nodes, want all %d labeled", total, labeled)
	}
	if d := len(s.Train) - int(0.6*float64(labeled)+0.5); d < -1 || d > 1 {
		t.Errorf("train has %d nodes, want about %d", len(s.Train), int(0.6*float64(labeled)))
	}
	again, _ := FractionSplit(labels, 0.6, 0.2, 7)
	if !reflect.DeepEqual(s, again) {
		t.Error("same seed gave a different split")
	}
	all, err := FractionSplit(labels, 1, 0, 7)
	if err != nil || len(all.Train) != labeled || len(all.Valid)+len(all.Test) != 0 {
		t.Errorf("train=1: %v, sizes %d/%d/%d", err, len(all.Train), len(all.Valid), len(all.Test))
	}
	for _, bad := range [][2]float64{{0.8, 0.3}, {-0.1, 0.5}, {0.5, -1}} {
		if _, err := FractionSplit(labels, bad[0], bad[1], 1); err == nil {
			t.Errorf("fractions %v accepted", bad)
		}
	}
	if _, err := FractionSplit([]int32{-1, -1}, 0.5, 0.2, 1); err == nil || !strings.Contains(err.Error(), "no labeled nodes") {
		t.Errorf("unlabeled input: %v", err)
	}
}
