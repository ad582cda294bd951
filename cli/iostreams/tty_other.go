//go:build !linux

package iostreams

import "os"

// IsTerminal reports whether f is a character device, the closest
// portable guess at a terminal.
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
