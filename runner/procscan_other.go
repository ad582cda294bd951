//go:build !linux

package runner

// listProcs cannot list processes here: cancel then reaches the
// processes named by pid files only.
func listProcs() []procInfo { return nil }

// envProcs finds nothing: there is no /proc to read.
func envProcs(string) []int { return nil }
