//go:build !linux

package main

import "os"

// fileIsTerminal reports whether f is a character device, the closest
// portable guess at a terminal.
func fileIsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
