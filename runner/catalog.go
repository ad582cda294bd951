package runner

import (
	"github.com/gnnscope/gnnscope/gnn/data/load"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/featcache"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/train"
)

// Models lists the model kinds a training config accepts (its Model), in
// the order a picker shows them. The slice is the caller's.
func Models() []string { return nn.KindNames() }

// The lists below are the engine's typed choices as the workbench's
// form, which does not import the engine, picks them: strings, in the
// order a picker shows them, the default first. The slices are the
// caller's.

// Samplers lists the samplers a training config accepts (train.Samplers).
func Samplers() []string { return names(train.Samplers) }

// OOMActions lists what a batch that runs out of memory may do
// (train.OOMActions).
func OOMActions() []string { return names(train.OOMActions()) }

// Devices lists the compute devices by kind (device.Kinds), the CPU
// first; a CUDA device may also be named cuda:N.
func Devices() []string { return names(device.Kinds()) }

// CachePolicies lists the feature cache's policies (featcache.Policies).
func CachePolicies() []string { return names(featcache.Policies()) }

// names returns values as strings.
func names[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

// CheckDataset reports whether ref names a dataset a run can load: a
// synthetic preset, a gnn-benchmark .npz file, an OGB or Planetoid folder
// or a .gsd cache file. It is the check Launch makes before anything starts, and
// does not load the dataset; the error lists the accepted forms.
func CheckDataset(ref string) error {
	if _, err := load.Resolve(ref); err != nil {
		return err
	}
	return nil
}
