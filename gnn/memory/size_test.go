package memory

import (
	"encoding/json"
	"testing"
)

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
