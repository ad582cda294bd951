package data

import (
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/graph"
)

// Dataset is a node-classification dataset held in memory.
type Dataset struct {
	Name string
	// Graph is the symmetric adjacency without self-loops, rows sorted.
	Graph *graph.CSR
	// X holds the node features, NumNodes × NumFeatures, row-major.
	X           []float32
	NumFeatures int
	// Y holds one label per node in [0, NumClasses), or -1 when unknown.
	Y          []int32
	NumClasses int
	// Split is the dataset's own split (OGB ships one); nil when it has
	// none and the caller should make one (see PerClassSplit).
	Split *Split
}

// Split lists the node ids used for training, validation and testing.
type Split struct {
	Train, Valid, Test []int32
}

// NumNodes returns the number of nodes.
func (d *Dataset) NumNodes() int { return d.Graph.N }

// Validate checks that the parts of the dataset agree with each other.
func (d *Dataset) Validate() error {
	if d.Graph == nil {
		return fmt.Errorf("dataset %s: no graph", d.Name)
	}
	if err := d.Graph.Validate(); err != nil {
		return fmt.Errorf("dataset %s: %w", d.Name, err)
	}
	n := d.Graph.N
	if d.NumFeatures <= 0 || len(d.X) != n*d.NumFeatures {
		return fmt.Errorf("dataset %s: %d feature values for %d nodes × %d features", d.Name, len(d.X), n, d.NumFeatures)
	}
	if len(d.Y) != n {
		return fmt.Errorf("dataset %s: %d labels for %d nodes", d.Name, len(d.Y), n)
	}
	if d.NumClasses <= 0 {
		return fmt.Errorf("dataset %s: %d classes", d.Name, d.NumClasses)
	}
	if d.NumClasses > n {
		return fmt.Errorf("dataset %s: %d classes for %d nodes (there cannot be more classes than nodes)", d.Name, d.NumClasses, n)
	}
	for i, y := range d.Y {
		if y < -1 || y >= int32(d.NumClasses) {
			return fmt.Errorf("dataset %s: label %d of node %d outside [0, %d)", d.Name, y, i, d.NumClasses)
		}
	}
	if err := CheckFinite(d.X, d.NumFeatures); err != nil {
		return fmt.Errorf("dataset %s: %w", d.Name, err)
	}
	if d.Split != nil {
		for name, s := range map[string][]int32{"train": d.Split.Train, "valid": d.Split.Valid, "test": d.Split.Test} {
			for _, v := range s {
				if v < 0 || int(v) >= n {
					return fmt.Errorf("dataset %s: %s split node %d out of range [0, %d)", d.Name, name, v, n)
				}
			}
		}
	}
	return nil
}

// CheckFinite returns an error naming the first row (in a Dataset, the
// node) of the row-major matrix x, cols values wide, that holds a NaN or
// an infinity: such a feature makes every loss NaN, so it is refused at
// load.
func CheckFinite(x []float32, cols int) error {
	for i, v := range x {
		if v-v != 0 { // NaN or ±Inf; a finite v gives 0
			return fmt.Errorf("feature row %d, column %d is %v (node features must be finite)", i/max(cols, 1), i%max(cols, 1), v)
		}
	}
	return nil
}
