package device

import "fmt"

// CountLabels checks the labels of SoftmaxCrossEntropy for a backend
// (named in panics, e.g. "cpu") and returns how many rows are labelled.
// There must be one label per row of logits (rows × cols); a label is a
// class in [0, cols) or -1 for a row to ignore. Anything else is a
// programming error and panics, as every Device method does on bad shapes.
func CountLabels(backend string, labels []int32, rows, cols int) int {
	if len(labels) != rows {
		panic(fmt.Sprintf("%s: SoftmaxCrossEntropy: %d labels for logits %dx%d", backend, len(labels), rows, cols))
	}
	counted := 0
	for i, l := range labels {
		switch {
		case l >= 0 && int(l) < cols:
			counted++
		case l != -1:
			panic(fmt.Sprintf("%s: SoftmaxCrossEntropy: label %d of row %d outside [0, %d)", backend, l, i, cols))
		}
	}
	return counted
}
