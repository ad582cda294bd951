// Package sessions is the writing and reading half of gnnscope's on-disk
// store: session folders, run journals (append, read, tail) and run states.
//
// Layout under the store root (see DefaultRoot):
//
//	sessions/<id>/session.json      SessionMeta: name, created, host, spec, variants
//	sessions/<id>/runs/<run>.jsonl  the run's journal: profile events, JSON Lines
//	sessions/<id>/runs/<run>.pid    the writer's pid (JSON; see WritePid)
//
// Session ids look like 20261122-153045-ab12 (UTC creation time and a random
// suffix): they sort by time and are safe file names. Run names are chosen
// by the caller and must pass ValidName.
//
// A journal is append-only. Its writer (JournalWriter, a profile.Sink)
// flushes at least every 200 ms and at every epoch's end, so a run that
// crashes or is killed leaves a journal readable up to its last flush; the
// reader skips a torn last line and counts malformed lines without failing.
// A run's status comes from its run_end event; without one, from whether
// the process in its pid file is still alive (running) or gone (crashed).
//
// This package imports only profile of gnnscope.
package sessions
