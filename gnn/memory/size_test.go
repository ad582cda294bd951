package memory

import (
	"encoding/json"
	"testing"
)

func TestParseSize(t *testing.T) {
	good := map[string]int64{
		"0": 0, "1048576": 1 << 20, "100B": 100, "512MiB": 512 << 20, "2GiB": 2 << 30,
		"0.1G": 107374182, "1.5 GiB": 3 << 29, "4k": 4096, "3KB": 3072, "1T": 1 << 40,
		" 64mib ": 64 << 20, "2gb": 2 << 30, "8388607T": 8388607 << 40,
	}
	for in, want := range good {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "-1", "-1GiB", "1.5.2G", "12XB", "NaN", "Inf", "1e400", "8388608T", "0x10", "1_000", "G1"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{100: "100B", 1536: "1.5KiB", 512 << 20: "512.0MiB", 2 << 30: "2.0GiB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestSizeJSON(t *testing.T) {
	var v struct {
		A, B Size
	}
	if err := json.Unmarshal([]byte(`{"A": "512MiB", "B": 1024}`), &v); err != nil || v.A != 512<<20 || v.B != 1024 {
		t.Fatalf("decode: %+v, %v", v, err)
	}
	for _, bad := range []string{`{"A": "lots"}`, `{"A": -3}`, `{"A": 1.5}`, `{"A": true}`} {
		if err := json.Unmarshal([]byte(bad), &v); err == nil {
			t.Errorf("decode %s: want an error", bad)
		}
	}
	b, _ := json.Marshal(Size(2048))
	if string(b) != "2048" {
		t.Errorf("encode: %s", b)
	}
}
