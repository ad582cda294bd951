// Package analysis turns a run's events into answers: the stage ledger
// (busy and exposed time per stage, per epoch and for the whole run), a
// verdict on what bound the run, time to accuracy over a session's runs,
// and advice with the figures that fired it.
//
// The ledger works on intervals, never on sums of durations: at every
// instant of a run's wall time exactly one stage is exposed, the one the
// trainer's lane is running or waiting on (see Category), so the exposed
// times add up to the wall time while overlapping stages show as busy but
// hidden time.
//
// Everything streams: a LedgerBuilder (and the RunBuilder around it) takes
// events one at a time in journal order. Memory is bounded by the batches
// of the epochs still open, not by the events: spans are kept per rank
// until the trainer starts the second epoch after theirs (and at least
// 4096 are kept, so that small epochs close far behind the trainer), then
// the epoch's window is swept and its spans dropped; a window keeps a
// fixed set of figures. A span that arrives after its window was swept is
// clipped to what is left and the clipped time counted (Ledger.LateS). A
// journal whose epochs never advance (a trainer that marks no epochs)
// keeps its spans until the end.
//
// This package imports profile alone: it computes, the views render.
package analysis
