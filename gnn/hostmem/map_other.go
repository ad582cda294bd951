//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package hostmem

import "errors"

// mapAnon is not available here: Alloc falls back to the Go heap.
func mapAnon(size int) ([]byte, error) { return nil, errors.New("no anonymous mappings") }

func unmap(b []byte) error { return nil }
