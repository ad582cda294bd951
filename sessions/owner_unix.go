//go:build unix

package sessions

import (
	"io/fs"
	"syscall"
)

// ownerOf returns the uid that owns the file of fi.
func ownerOf(fi fs.FileInfo) (int, bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), true
	}
	return 0, false
}
