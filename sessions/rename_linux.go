//go:build linux

package sessions

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames the folder from to to, refusing (an error
// wrapping os.ErrExist) when to exists.
func renameNoReplace(from, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EEXIST):
		return fmt.Errorf("rename %s: %w", to, os.ErrExist)
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EINVAL):
		return renameIfAbsent(from, to) // an old kernel, or a file system without it
	}
	return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
}
