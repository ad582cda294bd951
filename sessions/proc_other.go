//go:build !unix

package sessions

// processExists cannot check processes on this platform.
func processExists(pid int) (exists, known bool) { return false, false }

// nonblockFlag is 0: this platform has no FIFOs to block an open.
const nonblockFlag = 0

// CheckWritable cannot tell here: it returns nil.
func CheckWritable(dir string) error { return nil }
