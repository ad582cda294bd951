//go:build !unix

package sessions

// processExists cannot check processes on this platform.
func processExists(pid int) (exists, known bool) { return false, false }
