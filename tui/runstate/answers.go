package runstate

import (
	"time"

	"github.com/gnnscope/gnnscope/analysis"
)

// AnswersInterval is how long answers are kept while a run goes on and
// its events grow by less than a 32nd: computing them sweeps the spans of
// the epochs still open, a few milliseconds on a large run, which a
// dashboard drawing many frames a second must not pay every frame.
const AnswersInterval = time.Second

// Answers is what the analysis says of a run so far: its ledger and
// verdict (analysis.Run) and the advice for it. Views only draw it.
type Answers struct {
	Run    *analysis.Run
	Advice []analysis.Advice
	// Version is the run's version the answers were computed at, Events
	// its event count then.
	Version uint64
	Events  int64
	at      time.Time
}

// answers feeds the run's events to the analysis as they are digested
// and keeps the last answers computed.
type answers struct {
	b    *analysis.RunBuilder
	last *Answers
}

// Answers returns the analysis of the events digested so far. It is
// computed when a view asks and kept until the run changes; while the run
// goes on, it is kept up to AnswersInterval unless the events grew by a
// 32nd since, so a run that writes thousands of events a second is
// analysed about once a second however often it is drawn. Once the run
// has ended, the answers are those of every event. Nil before the first
// event.
func (r *Run) Answers() *Answers {
	if r.Events == 0 || r.ans.b == nil {
		return nil
	}
	if a := r.ans.last; a != nil && (a.Version == r.version ||
		!r.Ended && r.Events-a.Events < a.Events/32 && time.Since(a.at) < AnswersInterval) {
		return a
	}
	run := r.ans.b.Run()
	if run.Name == "" {
		run.Name = r.Name
	}
	r.ans.last = &Answers{Run: run, Advice: analysis.Advise(run, nil), Version: r.version, Events: r.Events, at: time.Now()}
	return r.ans.last
}
