// Package sessions is the writing and reading half of gnnscope's on-disk
// store: session folders, run journals (append, read, tail) and run states.
//
// Layout under the store root (see DefaultRoot):
//
//	sessions/<id>/session.json      SessionMeta: name, created, host, spec, variants
//	sessions/<id>/runs/<run>.jsonl  the run's journal: profile events, JSON Lines
//	sessions/<id>/runs/<run>.pid    the writer's pid (JSON padded to PidFileSize; see WritePid)
//	sessions/<id>/runs/<run>.rank<R>.jsonl  rank R > 0 of a distributed run
//	sessions/.new-<id>-<rand>/      a session being created (CreateWith), renamed to <id> whole
//	sessions/.rm-<id>-<rand>/       a session being deleted (Delete), renamed aside first
//
// A folder that is no whole session (no session.json, an old hidden
// creation or removal folder) is listed with StatusBroken and its reason,
// and Delete removes it by its name. "last" is the session created last,
// by session.json's created; only ids of the form NewID makes (CheckID)
// match a reference, and Import gives an archive of another id a new one.
//
// A distributed run (torchrun, DDP) is one run whose ranks write a journal
// each: rank 0 the run's own, rank R the run's .rank<R> journal, which is
// no run of its own. Readers (ScanRun, SummarizeRun, Compare, Replay,
// Live, BuildTrace) merge the ranks into the run: lanes rank<R>/<lane>,
// times on rank 0's clock by the ranks' wall-clock starts, rank 0's
// status.
//
// Session ids look like 20261122-153045-ab12 (UTC creation time and a random
// suffix): they sort by time and are safe file names. Run names are chosen
// by the caller and must pass ValidName; names ending in .rank<R> (R > 0)
// are the rank journals of a distributed run (SplitRankRun).
//
// Every name that becomes a path (session id, run, variant, a file of an
// archive) passes ValidName where it enters: read from session.json (Get),
// from an archive's manifest and files (Import; ImportOptions.Check for
// other packages' files), or given by a caller. A name is 1 to
// MaxNameLen bytes of A-Z a-z 0-9 '.' '_' '-', not starting with '.' or
// '-', so it is always one element of a path inside its folder.
//
// A journal is append-only. Its writer (JournalWriter, a profile.Sink)
// flushes at least every 200 ms and at every epoch's end, so a run that
// crashes or is killed leaves a journal readable up to its last flush; the
// reader skips a torn last line and counts malformed lines without failing.
// Every reader (the tailer, the scanner, replay and the backwards status
// scanner) is linear in the journal's size and skips a line longer than
// MaxEventSize (16 MiB) as malformed without holding it, naming its offset.
// A run's status comes from its run_end event; without one, from whether
// its writer is still alive (running) or gone (crashed): a writer holds a
// lock on its journal for as long as it runs (LockFile), so a run reads as
// running even when its pid file is missing; without the lock, the process
// in the pid file tells. A writer that could not end its journal (a full
// disk) records its exit in the pid file, in place (Session.RecordExit).
// Every process working for a session holds the session folder
// (Session.Hold), and Store.Delete refuses a held session.
//
// Journals, pid files and session.json are opened only if they are regular
// files (OpenRegular): a FIFO in their place is refused, never waited on.
// Every write inside the store follows no symbolic link: the file is
// opened (OpenRegularFile) or created and renamed (WriteStoreFile)
// relative to a handle on its folder opened with O_NOFOLLOW, so a link
// planted at a file or in place of runs/ is refused (ErrSymlink). A pid
// file that holds no pid (ErrBadPidFile) leaves its run unknown rather
// than failing the session. Files the user names (exports) go through
// CreateOutput: a regular file or nothing, claimed with O_EXCL.
// Everything in a store is private: folders 0700, files 0600 (less the
// umask); WriteFileAtomic never makes a file more open than the umask
// allows.
//
// torch.profiler traces (profile/kineto) become a session of one run with
// Store.ImportTraces, or join a finished run with Session.AttachTraces,
// which rewrites the run's journal with the trace's events before its
// run_end (atomically; a run that is still running is refused unless
// the caller holds its lock).
//
// This package imports only profile (and its subpackages) of gnnscope.
package sessions
