package device

import (
	"strings"
	"testing"
)

func TestCountLabels(t *testing.T) {
	if n := CountLabels("cpu", []int32{0, -1, 2, 1}, 4, 3); n != 3 {
		t.Errorf("counted %d labelled rows, want 3", n)
	}
	for _, c := range []struct {
		labels []int32
		want   string
	}{
		{[]int32{0, 1}, "cpu: SoftmaxCrossEntropy: 2 labels for logits 3x3"},
		{[]int32{0, 3, 1}, "label 3 of row 1 outside [0, 3)"},
		{[]int32{0, -2, 1}, "label -2 of row 1 outside [0, 3)"},
	} {
		func() {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, c.want) {
					t.Errorf("labels %v: panic %v, want one containing %q", c.labels, r, c.want)
				}
			}()
			CountLabels("cpu", c.labels, 3, 3)
		}()
	}
}
