package runstate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// TestNotRecorded is the repro of a PyTorch run on the CPU that ended
// with "no mem events yet" and an empty accuracy panel: once a run has
// ended, the views say what was not recorded and why.
func TestNotRecorded(t *testing.T) {
	ext := &Run{Ended: true, Config: json.RawMessage(`{"cmd":"python3 train.py"}`), Host: &profile.Host{Cores: 2}}
	if got := ext.NoMemText(); strings.Contains(got, "yet") || !strings.Contains(got, "on the CPU has no device allocator") {
		t.Errorf("ended external CPU run, memory: %q", got)
	}
	if got := ext.NoMetricText("test_acc"); strings.Contains(got, "yet") || !strings.Contains(got, "the trainer logged none") {
		t.Errorf("ended external run, accuracy: %q", got)
	}
	live := &Run{Config: ext.Config}
	if got := live.NoMemText(); got != "no mem events yet" {
		t.Errorf("running: %q", got)
	}
}
