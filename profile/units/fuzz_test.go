package units

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// readBack checks that ParseSize reads FormatSize(n) back to n, within
// the rounding of one decimal place of its unit; only a value that rounds
// up past 2^63-1 may be refused, as too large.
func readBack(t *testing.T, n int64) {
	t.Helper()
	s := FormatSize(n)
	got, err := ParseSize(s)
	unit := int64(1)
	for unit <= n/1024 {
		unit *= 1024
	}
	if err != nil {
		if !strings.Contains(err.Error(), "too large") || float64(n)+0.05*float64(unit) < math.MaxInt64 {
			t.Fatalf("ParseSize(FormatSize(%d) = %q): %v", n, s, err)
		}
		return
	}
	if diff := math.Abs(float64(got) - float64(n)); diff > 0.05*float64(unit)+1 {
		t.Fatalf("ParseSize(FormatSize(%d) = %q) = %d, off by %g", n, s, got, diff)
	}
}

// FuzzParseSize: any string gives a size or an error; an accepted size is
// not negative, reads back exactly from its plain byte count and, within
// rounding, from FormatSize; the unit is case-insensitive; and every
// non-negative count reads back from FormatSize. Run:
// go test -run x -fuzz FuzzParseSize -fuzztime 20s ./profile/units/
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"1048576", "512MiB", "1.5 GiB", "0.1G", "100B", " 2 t ", "8EiB", "1PiB", "7.9EiB",
		"9223372036854775807", "9223372036854775808", "-1K", "1e3", "1E3k", "NaN", "inf", "0x10", "1_000", "", "K",
		"8.0EiB", "1.0PiB", ".5k", "5.", "1e-400", "1e400M"} {
		f.Add(s, int64(0))
	}
	f.Add("", int64(1)<<50)
	f.Add("", int64(math.MaxInt64))
	f.Add("", int64(1023))
	f.Fuzz(func(t *testing.T, s string, n int64) {
		if n >= 0 {
			readBack(t, n)
		}
		v, err := ParseSize(s)
		if err != nil {
			if !strings.Contains(err.Error(), strconv.Quote(s)) {
				t.Fatalf("error %q does not quote the input", err)
			}
			return
		}
		if v < 0 {
			t.Fatalf("ParseSize(%q) = %d", s, v)
		}
		if again, err := ParseSize(strconv.FormatInt(v, 10)); err != nil || again != v {
			t.Fatalf("ParseSize(%q) = %d, but its byte count reads as %d, %v", s, v, again, err)
		}
		readBack(t, v)
		upper := strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' {
				return r - 'a' + 'A'
			}
			return r
		}, s)
		if u, err := ParseSize(upper); err != nil || u != v {
			t.Fatalf("ParseSize(%q) = %d but ParseSize(%q) = %d, %v", s, v, upper, u, err)
		}
	})
}

// FuzzDuration: what Duration writes (shown as positions, which --from
// takes back) reads with time.ParseDuration to within its precision. Run:
// go test -run x -fuzz FuzzDuration -fuzztime 20s ./profile/units/
func FuzzDuration(f *testing.F) {
	for _, d := range []time.Duration{0, 850 * time.Millisecond, 12345 * time.Millisecond, 59960 * time.Millisecond,
		65200 * time.Millisecond, 62 * time.Minute, -time.Second, math.MaxInt64, math.MinInt64, math.MinInt64 + 1} {
		f.Add(int64(d))
	}
	f.Fuzz(func(t *testing.T, n int64) {
		d := time.Duration(n)
		s := Duration(d)
		got, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("Duration(%d) = %q does not parse: %v", n, s, err)
		}
		abs := d.Abs()
		var prec time.Duration
		switch {
		case abs < time.Second:
			prec = time.Millisecond
		case abs < 10*time.Second:
			prec = time.Millisecond / 2
		case abs < time.Minute:
			prec = 5 * time.Millisecond
		case abs < time.Hour:
			prec = 100 * time.Millisecond
		default:
			prec = time.Minute
		}
		if diff := (got - d).Abs(); diff > prec {
			t.Fatalf("Duration(%v) = %q reads back as %v, off by %v (precision %v)", d, s, got, diff, prec)
		}
	})
}
