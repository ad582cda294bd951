package sessions

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// Liveness comes from locks that the running processes hold, not from
// pid files alone: a pid file may be missing (a full disk, a user's rm)
// while its process runs. The writer of a run's journal holds an
// exclusive lock (flock) on the journal for as long as it runs (LockFile
// on the descriptor that claimed it), and every process working for a
// session (a run's writer, the sequencer) holds a shared lock on the
// session folder (Session.Hold), which Store.Delete must take exclusively.
// The kernel drops a lock when its process ends, however it ends, so a
// held lock always means a live process on this host. Where flock is
// unavailable (some platforms and network file systems) readers fall back
// to the pid files.

// ErrLocked is the reason LockFile fails: another process holds the lock.
var ErrLocked = errors.New("locked by a running process")

// lockWait is how long LockFile retries while a reader's probe (Locked)
// holds the lock for an instant.
const lockWait = time.Second

// LockFile takes an exclusive lock on the open file f, retrying for a
// moment while a reader probes it; it fails with ErrLocked if another
// process holds it. The lock lasts until f is closed or the process ends.
// On a platform without flock it returns an error wrapping
// errors.ErrUnsupported.
func LockFile(f *os.File) error {
	deadline := time.Now().Add(lockWait)
	for {
		err := tryLock(f, true)
		if !errors.Is(err, ErrLocked) || time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("lock %s: %w", f.Name(), err)
			}
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Locked reports whether a process holds a lock on the regular file at
// path (see LockFile); known is false when that cannot be told: no such
// file, a file that is not regular, or no flock here.
func Locked(path string) (locked, known bool) {
	f, err := OpenRegular(path)
	if err != nil {
		return false, false
	}
	defer f.Close()
	return probeLock(f, false)
}

// probeLock tries a lock on f (exclusive or shared) and drops it at once:
// locked when another process holds a conflicting one; known false when
// the try failed otherwise.
func probeLock(f *os.File, exclusive bool) (locked, known bool) {
	switch err := tryLock(f, exclusive); {
	case errors.Is(err, ErrLocked):
		return true, true
	case err != nil:
		return false, false
	}
	unlockFile(f)
	return false, true
}

// Hold is a process's hold on a session folder (Session.Hold).
type Hold struct {
	f *os.File
}

// Hold takes a shared lock on the session's folder for the life of this
// process or until Release: while any process holds it, Store.Delete
// refuses to delete the session. It waits while a Delete is under way.
// On a platform without flock the hold does nothing (an error wrapping
// errors.ErrUnsupported, with a usable Hold).
func (s *Session) Hold() (*Hold, error) {
	f, err := os.Open(s.dir)
	if err != nil {
		return &Hold{}, fmt.Errorf("hold session %s: %w", s.Meta.ID, err)
	}
	if err := waitShared(f); err != nil {
		f.Close()
		return &Hold{}, fmt.Errorf("hold session %s: %w", s.Meta.ID, err)
	}
	return &Hold{f: f}, nil
}

// Release drops the hold.
func (h *Hold) Release() error {
	if h == nil || h.f == nil {
		return nil
	}
	err := h.f.Close()
	h.f = nil
	return err
}

// InUse reports whether a process holds the session (Session.Hold);
// known is false when that cannot be told here.
func (s *Session) InUse() (inUse, known bool) {
	f, err := os.Open(s.dir)
	if err != nil {
		return false, false
	}
	defer f.Close()
	return probeLock(f, true)
}
