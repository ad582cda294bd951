package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// multipliers maps a lower-case unit to its multiplier (see ParseSize).
var multipliers = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
	"p": 1 << 50, "pb": 1 << 50, "pib": 1 << 50,
	"e": 1 << 60, "eb": 1 << 60, "eib": 1 << 60,
}

// ParseSize parses a byte count: a plain number of bytes ("1048576") or a
// number with a unit, case-insensitive, with optional space: B, K/KB/KiB,
// M/MB/MiB, G/GB/GiB, T/TB/TiB, P/PB/PiB, E/EB/EiB (FormatSize writes the
// last two for the largest counts). All units are binary (1K = 1024
// bytes), as GPU memory is counted. Fractions are allowed ("0.1G", "1.5GiB") and
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
	mult, ok := multipliers[unit]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q (use B, KiB, MiB, GiB, TiB, PiB, EiB, or K, M, G, T, P, E)", s, t[i:])
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

// binaryUnits are the units past bytes, 1024 times apart.
var binaryUnits = [...]string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}

// formatBytes writes n with a binary unit: bytes under 1 KiB as a whole
// number, else one decimal place, two from GiB up when fine is set. sep
// goes between the number and the unit.
func formatBytes(n int64, sep string, fine bool) string {
	if n < 0 {
		if n == math.MinInt64 {
			return "-8" + sep + "EiB"
		}
		return "-" + formatBytes(-n, sep, fine)
	}
	if n < 1024 {
		return strconv.FormatInt(n, 10) + sep + "B"
	}
	v := float64(n) / 1024
	i := 0
	for v >= 1024 && i < len(binaryUnits)-1 {
		v /= 1024
		i++
	}
	prec := 1
	if fine && i >= 2 {
		prec = 2
	}
	return strconv.FormatFloat(v, 'f', prec, 64) + sep + binaryUnits[i]
}

// FormatSize writes n in the form ParseSize reads back, with a binary unit
// and one decimal place ("512.0MiB", "1.5GiB"); values under 1 KiB are
// written in bytes ("100B").
func FormatSize(n int64) string { return formatBytes(n, "", false) }

// Bytes writes a byte count for people, with one decimal place and a
// space before the unit: "512 B", "1.5 KiB", "312.4 MiB", "1.2 GiB".
func Bytes(n int64) string { return formatBytes(n, " ", false) }

// BytesFine is Bytes with two decimal places from GiB up ("1.25 GiB"), for
// tables that compare runs, where a tenth of a GiB is too coarse.
func BytesFine(n int64) string { return formatBytes(n, " ", true) }

// Duration formats a duration for axes and tables with millisecond precision
// where it matters: 850ms, 12.345s, 1m05.2s, 1h02m.
func Duration(d time.Duration) string {
	if d == math.MinInt64 {
		d++ // -d would overflow; a nanosecond is below the precision
	}
	neg := d < 0
	if neg {
		d = -d
	}
	var s string
	switch {
	case d < time.Second:
		s = strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < 10*time.Second:
		s = strconv.FormatFloat(d.Seconds(), 'f', 3, 64) + "s"
	case d < time.Minute:
		s = strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + "s"
	case d < time.Hour:
		m := int(d / time.Minute)
		sec := (d - time.Duration(m)*time.Minute).Seconds()
		s = strconv.Itoa(m) + "m" + pad2f(sec) + "s"
	default:
		h := int(d / time.Hour)
		m := int((d - time.Duration(h)*time.Hour) / time.Minute)
		s = strconv.Itoa(h) + "h" + pad2(m) + "m"
	}
	if neg {
		return "-" + s
	}
	return s
}

// Seconds writes a duration as seconds with microseconds: "12.345678s".
func Seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 6, 64) + "s"
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

func pad2f(s float64) string {
	s = math.Floor(s*10) / 10 // 59.96 is 59.9, not 60.0
	t := strconv.FormatFloat(s, 'f', 1, 64)
	if s < 10 {
		return "0" + t
	}
	return t
}
