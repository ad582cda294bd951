package analysis

import "fmt"

// Options are the choices of Explain.
type Options struct {
	// Baseline names the run time to accuracy is measured against: ""
	// is the first run of variant baseline, else the first run.
	Baseline string
	// Target is the validation accuracy of time to accuracy; 0 is
	// DefaultTargetShare of the baseline's best.
	Target float64
	// Gain estimates what each advice's changes would give; nil: not
	// estimated.
	Gain GainFunc
}

// Report is the analysis of a session's runs (or of one).
type Report struct {
	Runs []RunReport `json:"runs"`
	TTA  TTA         `json:"time_to_accuracy"`
}

// RunReport is one run's analysis and the advice for it.
type RunReport struct {
	*Run
	Advice []Advice `json:"advice"`
}

// Explain analyses runs: each run's advice, and time to accuracy over
// all of them.
func Explain(runs []*Run, opts Options) (*Report, error) {
	base := BaselineIndex(runs, opts.Baseline)
	if opts.Baseline != "" && base < 0 {
		return nil, fmt.Errorf("baseline %q: no such run among those explained", opts.Baseline)
	}
	rep := &Report{TTA: TimeToAccuracy(runs, base, opts.Target)}
	for _, r := range runs {
		rep.Runs = append(rep.Runs, RunReport{Run: r, Advice: Advise(r, opts.Gain)})
	}
	return rep, nil
}
