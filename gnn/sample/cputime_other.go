//go:build !unix

package sample

import "time"

// processCPU reports that process CPU time is not available here.
func processCPU() (time.Duration, bool) { return 0, false }
