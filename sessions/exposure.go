package sessions

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
)

// Exposure says why a session folder is open to others: writable by
// other users, or owned by another user ("" when neither). Such a folder
// lets someone else plant files and links in it; the store never follows
// a link when it writes there, but what the session shows may not be what
// its runs wrote.
func Exposure(dir string) string {
	fi, err := os.Lstat(dir)
	if err != nil {
		return ""
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return "a symbolic link to a folder elsewhere"
	}
	if fi.Mode().Perm()&0o002 != 0 {
		return fmt.Sprintf("writable by other users (mode %04o)", fi.Mode().Perm())
	}
	if uid, ok := ownerOf(fi); ok && uid != os.Getuid() {
		return fmt.Sprintf("owned by another user (uid %d)", uid)
	}
	return ""
}

// warnings says each session's exposure (see Exposure) once to a writer.
type warnings struct {
	mu     sync.Mutex
	w      io.Writer
	warned map[string]bool
}

// SetWarn makes the store write a warning to w, once per session, when
// it opens a session folder that is writable by other users or owned by
// another user (see Exposure); nil (the default) says nothing.
func (st *Store) SetWarn(w io.Writer) {
	if st.warn == nil {
		return
	}
	st.warn.mu.Lock()
	defer st.warn.mu.Unlock()
	st.warn.w = w
}

// checkExposure warns about the session folder dir of session id, once.
func (st *Store) checkExposure(id, dir string) {
	st.warn.mu.Lock()
	defer st.warn.mu.Unlock()
	if st.warn.w == nil || st.warn.warned[id] {
		return
	}
	if why := Exposure(dir); why != "" {
		if st.warn.warned == nil {
			st.warn.warned = map[string]bool{}
		}
		st.warn.warned[id] = true
		fmt.Fprintf(st.warn.w, "gnnscope: warning: session folder %s is %s: others may change what it holds (chmod 700 it, or check who owns it)\n", dir, why)
	}
}
