//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package hostmem

import (
	"fmt"
	"syscall"
)

// mapAnon maps size bytes of private anonymous memory, zeroed.
func mapAnon(size int) ([]byte, error) {
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("mmap %d bytes: %w", size, err)
	}
	return b, nil
}

// unmap releases a mapping made by mapAnon.
func unmap(b []byte) error {
	if err := syscall.Munmap(b); err != nil {
		return fmt.Errorf("munmap %d bytes: %w", len(b), err)
	}
	return nil
}
