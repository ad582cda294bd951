package device

import (
	"fmt"
	"strconv"
	"strings"
)

// Device kinds (ParseName).
const (
	KindCPU  = "cpu"
	KindCUDA = "cuda"
)

// ParseName parses a device name as users write it: "cpu" (or empty, the
// default), "cuda" (GPU 0) or "cuda:N".
func ParseName(s string) (kind string, ordinal int, err error) {
	s = strings.TrimSpace(strings.ToLower(s))
	switch {
	case s == "" || s == KindCPU:
		return KindCPU, 0, nil
	case s == KindCUDA:
		return KindCUDA, 0, nil
	case strings.HasPrefix(s, KindCUDA+":"):
		n, err := strconv.Atoi(s[len(KindCUDA)+1:])
		if err != nil || n < 0 {
			return "", 0, fmt.Errorf("device %q: the GPU number after cuda: must be a non-negative integer", s)
		}
		return KindCUDA, n, nil
	}
	return "", 0, fmt.Errorf("device %q is not one of cpu, cuda, cuda:N", s)
}
