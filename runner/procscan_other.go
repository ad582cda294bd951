//go:build !linux

package runner

// listProcs cannot list processes here: cancel then reaches the
// processes named by pid files only.
func listProcs() []procInfo { return nil }
