//go:build (darwin || freebsd || netbsd || openbsd || dragonfly) && !linux

package data

// drop does nothing here: the advice that releases mapped pages is used
// on Linux only.
func (m mapping) drop(b []byte) (bool, error) { return false, nil }
