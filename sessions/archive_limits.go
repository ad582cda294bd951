package sessions

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gnnscope/gnnscope/profile/units"
)

// How much an archive may expand on import.
//
// The files of an imported archive may add up to at most
// DefaultMaxExpansion times the archive's size as it was read (gzip
// compressed), but never less than DefaultMinTotalBytes and never more
// than DefaultMaxTotalBytes:
//
//	limit = min(32 GiB, max(64 MiB, 100 x archive size))
//
// Session journals compress about 6-8 times with gzip (JSON lines of
// numbers), so real archives stay far below the ratio; an archive of
// zeros or repeated lines, which gzip shrinks up to a thousand times, is
// refused before it fills the disk. The limit is enforced as the files are
// written, byte by byte: an archive read from a pipe, whose size is not
// known in advance, is held to the ratio of what was read of it so far.
const (
	DefaultMaxExpansion  = 100
	DefaultMinTotalBytes = 64 << 20 // 64 MiB
	DefaultMaxTotalBytes = 32 << 30 // 32 GiB
)

// ErrArchiveTooLarge is wrapped (with ErrBadArchive) by the error of an
// import whose files add up to more than the limit for the archive's size.
var ErrArchiveTooLarge = errors.New("archive expands beyond its limit")

// StoreError is an error of Import writing into the store: a full disk, a
// quota, a read-only file system, missing permissions. The store failed,
// not the archive: it does not wrap ErrBadArchive.
type StoreError struct {
	Root string // the store's root folder
	File string // the file or folder being written, relative to the session ("" if none)
	Err  error  // the cause, e.g. syscall.ENOSPC
}

// Error says "writing to store ROOT: [FILE: ]CAUSE".
func (e *StoreError) Error() string {
	if e.File != "" {
		return fmt.Sprintf("writing to store %s: %s: %v", e.Root, e.File, e.Err)
	}
	return fmt.Sprintf("writing to store %s: %v", e.Root, e.Err)
}

// Unwrap returns the cause.
func (e *StoreError) Unwrap() error { return e.Err }

// storeErr wraps err, an error of writing file (relative to the session,
// or "") into the store at root. A *fs.PathError gives its cause alone:
// its path is a temporary folder of the import.
func storeErr(root, file string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &StoreError{Root: root, File: file, Err: err}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// importLimit is the limit of an import's total bytes (see
// DefaultMaxExpansion) and what was written so far.
type importLimit struct {
	ratio, floor, cap int64
	size              int64           // the archive's size, if known (else 0)
	read              *countingReader // the archive as it is read
	written           int64           // file bytes written so far
}

func newImportLimit(opts ImportOptions, read *countingReader) *importLimit {
	return &importLimit{ratio: opts.MaxExpansion, floor: opts.MinTotalBytes, cap: opts.MaxTotalBytes,
		size: opts.ArchiveSize, read: read}
}

// archiveSize returns the archive's size: as given, else as read so far.
func (l *importLimit) archiveSize() int64 {
	if l.size > 0 {
		return l.size
	}
	return l.read.n
}

// limit returns the most file bytes the archive may hold now.
func (l *importLimit) limit() int64 {
	n := l.archiveSize()
	if l.ratio <= 0 || n > l.cap/l.ratio {
		return l.cap
	}
	return min(l.cap, max(l.floor, l.ratio*n))
}

// allows reports whether n more bytes fit: under the limit for the
// archive's size if it is known, else under the absolute cap (the ratio
// is then checked as the bytes are written).
func (l *importLimit) allows(n int64) bool {
	lim := l.cap
	if l.size > 0 {
		lim = l.limit()
	}
	return n >= 0 && l.written <= lim && n <= lim-l.written
}

// exceeded is the error of an archive over its limit.
func (l *importLimit) exceeded() error {
	size := "an archive of " + units.Bytes(l.archiveSize())
	if l.size <= 0 {
		size = "the " + units.Bytes(l.archiveSize()) + " read of it so far"
	}
	return badArchive("%w: its files add up to more than %s, the limit for %s (%d times its compressed size, at least %s, at most %s)",
		ErrArchiveTooLarge, units.Bytes(l.limit()), size, l.ratio, units.Bytes(l.floor), units.Bytes(l.cap))
}

// importSink writes an entry's data to its file in the store, counting it
// against the limit; it keeps the first error of the file (a store error),
// which io.Copy does not tell apart from the archive's.
type importSink struct {
	w    io.Writer
	lim  *importLimit
	werr error
}

func (s *importSink) Write(p []byte) (int, error) {
	if int64(len(p)) > s.lim.limit()-s.lim.written {
		return 0, s.lim.exceeded()
	}
	n, err := s.w.Write(p)
	s.lim.written += int64(n)
	if err != nil && s.werr == nil {
		s.werr = err
	}
	return n, err
}

// Import folders.
//
// An import extracts into a hidden folder of the store's sessions folder,
// named importPrefix, 'p', the importing process's pid, '-' and a random
// suffix, and holds an exclusive lock (flock) on it while it runs. A
// folder left by an import that was killed is removed by the next import:
// one that nobody holds the lock of and whose process is gone (or that is
// older than staleImportAge).
const (
	importPrefix   = ".import-"
	staleImportAge = 24 * time.Hour
)

// importDir creates and locks the folder of an import in sessionsDir; the
// returned file holds the lock until it is closed.
func importDir(sessionsDir string) (dir string, lock *os.File, err error) {
	dir, err = os.MkdirTemp(sessionsDir, fmt.Sprintf("%sp%d-", importPrefix, os.Getpid()))
	if err != nil {
		return "", nil, err
	}
	lock, held, err := lockDir(dir)
	if err == nil && !held {
		err = errors.New("locked by another process")
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return dir, lock, nil
}

// removeStaleImports removes the folders of imports that were interrupted
// (see importPrefix); it leaves those of imports that are running.
func removeStaleImports(sessionsDir string) {
	ents, err := os.ReadDir(sessionsDir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), importPrefix) {
			removeIfStale(filepath.Join(sessionsDir, e.Name()))
		}
	}
}

// removeIfStale removes the import folder dir if its import is over: its
// lock is free and its process gone, or it is older than staleImportAge.
func removeIfStale(dir string) {
	lock, held, err := lockDir(dir)
	if err != nil || !held {
		return // gone, or an import is running in it
	}
	defer lock.Close()
	old := false
	if fi, err := os.Stat(dir); err == nil {
		old = time.Since(fi.ModTime()) > staleImportAge
	}
	// between its creation and its lock, a folder is free: its process
	// tells whether it is still to be locked
	if pid, ok := importPid(filepath.Base(dir)); ok && !old {
		if exists, known := processExists(pid); exists || !known {
			return
		}
	} else if !ok && !old && !locksImports {
		return
	}
	os.RemoveAll(dir)
}

// importPid returns the pid in an import folder's name.
func importPid(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, importPrefix+"p")
	if !ok {
		return 0, false
	}
	digits, _, ok := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(digits)
	if !ok || err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}
