//go:build !linux

package cpu

// AdviseHugePages does nothing on this platform and reports false.
func AdviseHugePages(buf []float32) bool { return false }

func adviseHuge(buf []float32, on bool) bool { return false }
