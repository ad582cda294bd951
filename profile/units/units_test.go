package units

import (
	"math"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	good := map[string]int64{
		"0": 0, "1048576": 1 << 20, "100B": 100, "512MiB": 512 << 20, "2GiB": 2 << 30,
		"0.1G": 107374182, "1.5 GiB": 3 << 29, "4k": 4096, "3KB": 3072, "1T": 1 << 40,
		" 64mib ": 64 << 20, "2gb": 2 << 30, "8388607T": 8388607 << 40,
		"1PiB": 1 << 50, "3p": 3 << 50, "7EB": 7 << 60, "1.5E": 3 << 59,
	}
	for in, want := range good {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "-1", "-1GiB", "1.5.2G", "12XB", "NaN", "Inf", "1e400", "8388608T", "8E", "8.0EiB", "0x10", "1_000", "G1", "1Z"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{100: "100B", 1536: "1.5KiB", 512 << 20: "512.0MiB", 2 << 30: "2.0GiB", -1536: "-1.5KiB", -5: "-5B"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
		if back, err := ParseSize(FormatSize(n)); n >= 0 && (err != nil || back != n) {
			t.Errorf("ParseSize(FormatSize(%d)) = %d, %v", n, back, err)
		}
	}
}

func TestBytes(t *testing.T) {
	for _, c := range []struct {
		n           int64
		bytes, fine string
	}{
		{0, "0 B", "0 B"},
		{1023, "1023 B", "1023 B"},
		{1536, "1.5 KiB", "1.5 KiB"},
		{312<<20 + 400<<10, "312.4 MiB", "312.4 MiB"},
		{5 << 29, "2.5 GiB", "2.50 GiB"},
		{1<<30 + 1<<28, "1.2 GiB", "1.25 GiB"},
		{3 << 40, "3.0 TiB", "3.00 TiB"},
		{-2048, "-2.0 KiB", "-2.0 KiB"},
		{math.MaxInt64, "8.0 EiB", "8.00 EiB"},
		{math.MinInt64, "-8 EiB", "-8 EiB"},
	} {
		if got := Bytes(c.n); got != c.bytes {
			t.Errorf("Bytes(%d) = %q, want %q", c.n, got, c.bytes)
		}
		if got := BytesFine(c.n); got != c.fine {
			t.Errorf("BytesFine(%d) = %q, want %q", c.n, got, c.fine)
		}
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		850 * time.Millisecond:    "850ms",
		12345 * time.Millisecond:  "12.35s",
		1234 * time.Millisecond:   "1.234s",
		65200 * time.Millisecond:  "1m05.2s",
		119960 * time.Millisecond: "1m59.9s",
		3720 * time.Second:        "1h02m",
		-1500 * time.Millisecond:  "-1.500s",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
	if got := Seconds(1234567891 * time.Nanosecond); got != "1.234568s" {
		t.Errorf("Seconds: %q", got)
	}
}
