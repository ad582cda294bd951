package data

import (
	"os"
	"syscall"
	"unsafe"
)

// drop tells the kernel that the pages wholly inside b, which lies in m,
// are not needed for now: they leave the process's resident set and, the
// mapping being a shared read-only map of a file, come back from the page
// cache (or the file) with the same bytes if read again. It reports
// whether there was a whole page to drop.
func (m mapping) drop(b []byte) (bool, error) {
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (page - start%page) % page
	if uintptr(len(b)) < lo+page {
		return false, nil
	}
	hi := uintptr(len(b)) - (uintptr(len(b))-lo)%page
	return true, syscall.Madvise(b[lo:hi], syscall.MADV_DONTNEED)
}
