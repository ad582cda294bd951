package device

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind names a device backend (ParseName, Info.Backend).
type Kind string

// The device kinds.
const (
	KindCPU  Kind = "cpu"
	KindCUDA Kind = "cuda"
)

// Kinds lists the device kinds, the default first.
func Kinds() []Kind { return []Kind{KindCPU, KindCUDA} }

// ParseName parses a device name as users write it: "cpu" (or empty, the
// default), "cuda" (GPU 0) or "cuda:N".
func ParseName(s string) (kind Kind, ordinal int, err error) {
	s = strings.TrimSpace(strings.ToLower(s))
	switch {
	case s == "" || s == string(KindCPU):
		return KindCPU, 0, nil
	case s == string(KindCUDA):
		return KindCUDA, 0, nil
	case strings.HasPrefix(s, string(KindCUDA)+":"):
		n, err := strconv.Atoi(s[len(KindCUDA)+1:])
		if err != nil || n < 0 {
			return "", 0, fmt.Errorf("device %q: the GPU number after cuda: must be a non-negative integer", s)
		}
		return KindCUDA, n, nil
	}
	return "", 0, fmt.Errorf("device %q is not one of cpu, cuda, cuda:N", s)
}
