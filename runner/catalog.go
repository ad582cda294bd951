package runner

import (
	"github.com/gnnscope/gnnscope/gnn/data/load"
	"github.com/gnnscope/gnnscope/gnn/nn"
)

// Models lists the model kinds a training config accepts (its Model), in
// the order a picker shows them. The slice is the caller's.
func Models() []string { return nn.KindNames() }

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
