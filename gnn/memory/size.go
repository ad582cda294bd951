package memory

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Size is a byte count. It decodes from a JSON number of bytes or a string
// that ParseSize accepts, and encodes as a number.
type Size int64

// units maps a lower-case unit to its multiplier; every unit is binary
// (see ParseSize).
var units = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
}

// ParseSize parses a byte count: a plain number of bytes ("1048576") or a
// number with a unit, case-insensitive, with optional space: B, K/KB/KiB,
// M/MB/MiB, G/GB/GiB, T/TB/TiB. All units are binary (1K = 1024 bytes), as
// GPU memory is counted. Fractions are allowed ("0.1G", "1.5GiB") and
// rounded down to whole bytes. Negative, non-finite, fractional bare byte
// counts and values past 2^63-1 are refused.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("size %q: empty", s)
	}
	i := len(t)
	for i > 0 {
		c := t[i-1]
		if (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') {
			i--
			continue
		}
		break
	}
	num, unit := strings.TrimSpace(t[:i]), strings.ToLower(t[i:])
	mult, ok := units[unit]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q (use B, KiB, MiB, GiB, TiB, or K, M, G, T)", s, t[i:])
	}
	if num == "" {
		return 0, fmt.Errorf("size %q: no number", s)
	}
	if n, err := strconv.ParseInt(num, 10, 64); err == nil {
		if n < 0 {
			return 0, fmt.Errorf("size %q: negative", s)
		}
		if n > math.MaxInt64/mult {
			return 0, fmt.Errorf("size %q: too large", s)
		}
		return n * mult, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || strings.ContainsAny(num, "xXpP_") {
		return 0, fmt.Errorf("size %q: %q is not a number", s, num)
	}
	if f < 0 {
		return 0, fmt.Errorf("size %q: negative", s)
	}
	b := f * float64(mult)
	if b >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	return int64(b), nil
}

// FormatSize writes n with a binary unit and up to one decimal place
// ("512.0MiB", "1.5GiB"); values under 1 KiB are written in bytes ("100B").
func FormatSize(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%dB", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit || m <= -unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f%ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// UnmarshalJSON accepts a number of bytes or a size string.
func (z *Size) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		n, err := ParseSize(s)
		if err != nil {
			return err
		}
		*z = Size(n)
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("size: want a number of bytes or a string such as \"512MiB\", got %s", b)
	}
	if f < 0 || f >= math.MaxInt64 || f != math.Trunc(f) {
		return fmt.Errorf("size: %s is not a whole non-negative number of bytes", b)
	}
	*z = Size(f)
	return nil
}

// String formats the size with FormatSize.
func (z Size) String() string { return FormatSize(int64(z)) }
