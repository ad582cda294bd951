package draw

import (
	"math"
	"strconv"
	"time"
)

// Clock formats a replay position as m:ss.t (h:mm:ss past an hour).
func Clock(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	h := int(d / time.Hour)
	m := int((d % time.Hour) / time.Minute)
	s := int((d % time.Minute) / time.Second)
	t := int((d % time.Second) / (100 * time.Millisecond))
	if h > 0 {
		return strconv.Itoa(h) + ":" + pad2(m) + ":" + pad2(s)
	}
	return strconv.Itoa(m) + ":" + pad2(s) + "." + strconv.Itoa(t)
}

// Secs formats seconds for tables: 3 significant-ish digits (0.123,
// 12.3, 1234); "-" for zero or not finite.
func Secs(s float64) string {
	if s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return "-"
	}
	switch {
	case s < 1:
		return strconv.FormatFloat(s, 'f', 3, 64)
	case s < 100:
		return strconv.FormatFloat(s, 'f', 2, 64)
	}
	return strconv.FormatFloat(s, 'f', 0, 64)
}

// Num formats a chart value compactly: 4 significant digits, k/M/G past a
// thousand.
func Num(v float64) string {
	if math.IsNaN(v) {
		return "NaN"
	}
	if math.IsInf(v, 0) {
		if v > 0 {
			return "Inf"
		}
		return "-Inf"
	}
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return strconv.FormatFloat(v/1e9, 'f', 1, 64) + "G"
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 1, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + "k"
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1 || a == 0:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}
