//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package data

// addressSpaceLeft reports no address-space limit where there is no
// RLIMIT_AS.
func addressSpaceLeft() int64 { return 0 }
