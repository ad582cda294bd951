package sessions

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is the reason a journal, pid file or session file that is
// not a regular file (a FIFO, a device, a socket, a folder) is refused:
// opening a FIFO would wait for a writer, and reading a device might
// never end.
var ErrNotRegular = errors.New("not a regular file")

// OpenRegular opens path for reading if it is a regular file. It opens
// without blocking (a FIFO's open would wait for a writer) and checks the
// file it opened, so the file checked is the file read. A file that is not
// regular is an error naming path and wrapping ErrNotRegular.
func OpenRegular(path string) (*os.File, error) {
	return openRegular(path, os.O_RDONLY, 0)
}

// OpenRegularFile opens path with flag (os.O_WRONLY|os.O_APPEND|
// os.O_CREATE, say) and perm, when it creates the file, like os.OpenFile,
// but without blocking on a FIFO and refusing anything but a regular file
// (see OpenRegular). It is how the store's files are written: an open
// for writing follows no symbolic link, neither at path nor in place of
// the folder that holds it (ErrSymlink).
func OpenRegularFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	return openRegular(path, flag, perm)
}

// openRegular opens path with flag (and perm, when it creates the file)
// and refuses it unless it is a regular file (see OpenRegular).
func openRegular(path string, flag int, perm fs.FileMode) (*os.File, error) {
	if flag&writeFlags != 0 {
		return openNoFollow(path, flag, perm)
	}
	f, err := os.OpenFile(path, flag|nonblockFlag, perm)
	if err != nil {
		// A FIFO without a reader cannot be opened for writing without
		// blocking (ENXIO): say what it is.
		if fi, serr := os.Stat(path); serr == nil && !fi.Mode().IsRegular() {
			return nil, notRegular(path, fi.Mode())
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, notRegular(path, fi.Mode())
	}
	return f, nil
}

// notRegular is the error for the file at path of mode m, not regular.
func notRegular(path string, m fs.FileMode) error {
	return fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, fileKind(m))
}

// fileKind names the type of a file that is not regular.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a folder"
	}
	return "type " + m.Type().String()
}

// ErrTooLarge is the reason a pid or session file larger than its
// bound is refused.
var ErrTooLarge = errors.New("file too large")

// ReadRegular reads the regular file at path (see OpenRegular), which
// must hold at most max bytes: a larger one is an error naming path and
// wrapping ErrTooLarge, read no further than max+1 bytes.
func ReadRegular(path string, max int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: %w (over %d bytes)", path, ErrTooLarge, max)
	}
	return b, nil
}
