package runstate

import "github.com/gnnscope/gnnscope/analysis"

// Answers is what the analysis says of a run so far: its ledger and
// verdict (analysis.Run) and the advice for it. Views only draw it.
type Answers struct {
	Run    *analysis.Run
	Advice []analysis.Advice
	// Version is the run's version the answers were computed at.
	Version uint64
}

// answers feeds the run's events to the analysis as they are digested
// and keeps the last answers computed.
type answers struct {
	b    *analysis.RunBuilder
	last *Answers
}

// Answers returns the analysis of the events digested so far. It is
// computed when asked and kept until the next event: views ask when they
// draw, which they do at a bounded rate, so a run that writes thousands of
// events a second is analysed a few times a second at most. Nil before
// the first event.
func (r *Run) Answers() *Answers {
	if r.Events == 0 || r.ans.b == nil {
		return nil
	}
	if a := r.ans.last; a != nil && a.Version == r.version {
		return a
	}
	run := r.ans.b.Run()
	if run.Name == "" {
		run.Name = r.Name
	}
	r.ans.last = &Answers{Run: run, Advice: analysis.Advise(run, nil), Version: r.version}
	return r.ans.last
}
