package runner

import (
	"runtime/debug"
	"testing"
)

func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "")
	TuneGC()
	if got := debug.SetGCPercent(100); got != EngineGCPercent {
		t.Errorf("GC percent %d after TuneGC, want %d", got, EngineGCPercent)
	}
	t.Setenv("GOGC", "300")
	TuneGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("TuneGC changed the GC percent to %d although GOGC is set", got)
	}
}
