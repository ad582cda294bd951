package data

import (
	"fmt"
	"unsafe"
)

// DropFeaturePages tells the operating system that the pages of d's
// feature matrix are not needed for now, when d was mapped from a cache
// file (see Load): they leave the process's resident set, and a later read
// of d.X brings them back from the page cache or the file, unchanged. Call
// it once a copy of the features (a normalized one, say) has replaced d.X
// for the rest of the work: on synth-products the mapped features are
// 0.98 GB that the process would otherwise keep resident beside the copy.
// It reports whether pages were dropped; a Dataset read into memory, or
// one not from Load, is left alone, and so is every mapping where the
// system is not Linux.
func DropFeaturePages(d *Dataset) (bool, error) {
	mappings.Lock()
	l, ok := mappings.m[d]
	mappings.Unlock()
	if !ok || !l.mapped || len(d.X) == 0 {
		return false, nil
	}
	mem := l.m.bytes()
	x := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(d.X))), len(d.X)*4)
	base, start := uintptr(unsafe.Pointer(unsafe.SliceData(mem))), uintptr(unsafe.Pointer(unsafe.SliceData(x)))
	if start < base || start+uintptr(len(x)) > base+uintptr(len(mem)) {
		return false, nil // features replaced by memory outside the mapping
	}
	dropped, err := l.m.drop(x)
	if err != nil {
		return false, fmt.Errorf("drop the pages of %s's features: %w", l.path, err)
	}
	return dropped, nil
}
