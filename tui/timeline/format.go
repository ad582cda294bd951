package timeline

import (
	"strconv"
	"strings"
	"time"

	"github.com/gnnscope/gnnscope/profile/units"
)

// spanLen formats a length: as units.Duration from a millisecond on when
// that is exact to the millisecond, else to three decimals of the unit
// that fits (ns, µs — "us" with ascii —, ms), so that zooming below a
// millisecond keeps its labels.
func spanLen(d int64, ascii bool) string {
	switch {
	case d < 0:
		return "-" + spanLen(-d, ascii)
	case d < int64(time.Microsecond):
		return strconv.FormatInt(d, 10) + "ns"
	case d < int64(time.Millisecond):
		if ascii {
			return decimals(float64(d)/1e3) + "us"
		}
		return decimals(float64(d)/1e3) + "µs"
	case d < int64(time.Second) && d%int64(time.Millisecond) != 0:
		return decimals(float64(d)/1e6) + "ms"
	}
	return units.Duration(time.Duration(d))
}

// decimals writes v with at most three decimals, trailing zeros dropped.
func decimals(v float64) string {
	s := strconv.FormatFloat(v, 'f', 3, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// stamp formats a time on the run's clock to the resolution res (ns): as
// units.Duration when res is a millisecond or more, else with as many
// decimals as res needs: in ms below a second, trailing zeros dropped
// ("3ms", "1.25ms"), in seconds from one on.
func stamp(t, res int64) string {
	if res >= int64(time.Millisecond) {
		return units.Duration(time.Duration(t))
	}
	prec := 6 // ns
	if res >= int64(time.Microsecond) {
		prec = 3
	}
	if t > -int64(time.Second) && t < int64(time.Second) {
		s := strconv.FormatFloat(float64(t)/1e6, 'f', prec, 64)
		return strings.TrimSuffix(strings.TrimRight(s, "0"), ".") + "ms"
	}
	return strconv.FormatFloat(float64(t)/1e9, 'f', prec+3, 64) + "s"
}
