package cpu

import (
	"syscall"
	"unsafe"
)

// AdviseHugePages asks the kernel to back buf with transparent huge pages
// (madvise MADV_HUGEPAGE on its 2 MiB-aligned interior) and reports whether
// the advice was taken. Call it on a large host matrix that random row
// gathers will read (the feature matrix) before first writing it: with 4 KiB
// pages nearly every gathered row misses the TLB, and on this backend's
// benchmark machine huge pages doubled GatherHost bandwidth. It has no
// effect where transparent huge pages are disabled ("never").
func AdviseHugePages(buf []float32) bool { return adviseHuge(buf, true) }

// adviseHuge advises for (on) or against transparent huge pages.
func adviseHuge(buf []float32, on bool) bool {
	const huge = 2 << 20
	if len(buf)*4 < 2*huge {
		return false
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(buf))), len(buf)*4)
	start := (huge - uintptr(unsafe.Pointer(&b[0]))%huge) % huge
	end := uintptr(len(b)) - (uintptr(len(b))-start)%huge
	if end <= start {
		return false
	}
	advice := syscall.MADV_HUGEPAGE
	if !on {
		advice = syscall.MADV_NOHUGEPAGE
	}
	return syscall.Madvise(b[start:end], advice) == nil
}
