//go:build !linux

package cpu

import "runtime"

// osYield lets other goroutines run (a thread-level yield needs Linux).
func osYield() { runtime.Gosched() }
