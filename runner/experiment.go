package runner

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/train"
)

// Split modes.
const (
	SplitAuto     = "auto"      // the dataset's own split, else per-class
	SplitPerClass = "per-class" // PerClass training nodes of every class, then NumValid and NumTest
	SplitFrac     = "frac"      // fractions of the labeled nodes
)

// Split says how to split a dataset that has no split of its own (or, with
// mode per-class or frac, one that has).
type Split struct {
	Mode      string  `json:"mode"`       // auto, per-class or frac
	PerClass  int     `json:"per_class"`  // per-class: training nodes per class
	NumValid  int     `json:"num_valid"`  // per-class: validation nodes
	NumTest   int     `json:"num_test"`   // per-class: test nodes
	TrainFrac float64 `json:"train_frac"` // frac: training fraction of the labeled nodes
	ValidFrac float64 `json:"valid_frac"` // frac: validation fraction (the rest is test)
	// Seed draws the split; nil means the experiment's training seed
	// (Experiment.Train.Seed), so each seed is one split and one
	// initialization.
	Seed *uint64 `json:"seed,omitempty"`
}

// DefaultSplit returns the split settings of `gnnscope train`: auto, 20
// per class, 500 validation, 1000 test; fractions 0.6 and 0.2.
func DefaultSplit() Split {
	return Split{Mode: SplitAuto, PerClass: 20, NumValid: 500, NumTest: 1000, TrainFrac: 0.6, ValidFrac: 0.2}
}

// Validate reports impossible split settings.
func (s Split) Validate() error {
	var errs []string
	switch s.Mode {
	case SplitAuto, SplitPerClass, SplitFrac:
	default:
		errs = append(errs, fmt.Sprintf("split mode %q is not one of auto, per-class, frac", s.Mode))
	}
	if s.PerClass < 0 || s.NumValid < 0 || s.NumTest < 0 {
		errs = append(errs, fmt.Sprintf("split sizes must be non-negative (per class %d, valid %d, test %d)", s.PerClass, s.NumValid, s.NumTest))
	}
	if !(s.TrainFrac >= 0 && s.ValidFrac >= 0 && s.TrainFrac+s.ValidFrac <= 1) {
		errs = append(errs, fmt.Sprintf("split fractions must be >= 0 and sum to at most 1 (train %g, valid %g)", s.TrainFrac, s.ValidFrac))
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// Experiment is what to run: a dataset, how to split it, and the base
// training config that variants override.
type Experiment struct {
	Name string `json:"name,omitempty"`
	// Data is a dataset reference as load.Open takes it: a synthetic
	// preset, a .npz file, an OGB or Planetoid folder or a .gsd cache file.
	Data string `json:"data"`
	// NoCache neither reads nor writes the dataset cache.
	NoCache bool         `json:"no_cache,omitempty"`
	Split   Split        `json:"split"`
	Train   train.Config `json:"train"`
	// Repeats runs every variant this many times, interleaved ABBA-style
	// (0 and 1: once); LaunchOptions.Repeats, when set, takes precedence.
	Repeats int `json:"repeats,omitempty"`
	// LogMax caps each run's log (runs/<run>.log) at this many bytes,
	// its head and tail kept (see CapLog); 0 means DefaultLogMax.
	LogMax int64 `json:"log_max,omitempty"`
}

// MinLogMax is the smallest log cap an experiment may set.
const MinLogMax = 64 << 10

// LogCap returns the cap of the experiment's run logs (see LogMax).
func (e Experiment) LogCap() int64 {
	if e.LogMax <= 0 {
		return DefaultLogMax
	}
	return max(e.LogMax, MinLogMax)
}

// NewExperiment returns an experiment on data with the default split and
// the given model's default config (train.Defaults).
func NewExperiment(data, model string) Experiment {
	return Experiment{Data: data, Split: DefaultSplit(), Train: train.Defaults(nn.Kind(model))}
}

// SplitSeed returns the seed of the split: Split.Seed if set, else the
// base config's training seed (a variant that changes the seed keeps the
// experiment's split, so variants stay comparable).
func (e Experiment) SplitSeed() uint64 {
	if e.Split.Seed != nil {
		return *e.Split.Seed
	}
	return e.Train.Seed
}

// Validate checks the experiment's settings (not whether the dataset
// exists; see CheckDataset).
func (e Experiment) Validate() error {
	if strings.TrimSpace(e.Data) == "" {
		return errors.New("experiment: no dataset (data)")
	}
	if err := e.Split.Validate(); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	if err := e.Train.Validate(); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	if e.Repeats < 0 || e.Repeats > MaxRuns {
		return fmt.Errorf("experiment: repeats must be between 1 and %d, got %d", MaxRuns, e.Repeats)
	}
	return nil
}
