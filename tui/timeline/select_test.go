package timeline

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// TestDetailsLinks: a selected kernel lists the launch that shares its
// link, and nothing else (link 51 is not link 5).
func TestDetailsLinks(t *testing.T) {
	r := runstate.NewRun("trace")
	evs := []profile.Event{
		{T: profile.TypeRunStart, Run: "trace"},
		span("cudaLaunchKernel", "runtime/1", 0, 2*ms),
		span("gemm", "gpu0/s7", 4*ms, 10*ms),
		span("cudaLaunchKernel", "runtime/1", 20*ms, 2*ms),
	}
	evs[1].Attrs = json.RawMessage(`{"kind":"runtime","link":5,"ext":-3}`)
	evs[2].Attrs = json.RawMessage(`{"kind":"kernel","link":5,"launch_ns":2000000}`)
	evs[3].Attrs = json.RawMessage(`{"kind":"runtime","link":51}`)
	for i := range evs {
		r.Add(&evs[i])
	}
	m := newModel(common.Options{NoColor: true, ASCII: true})
	m.sel = 1 // the kernel
	d := ansi.Strip(strings.Join(m.Details(r, 100), "\n"))
	if !strings.Contains(d, "linked: runtime/1 cudaLaunchKernel  start 0ms  duration 2ms") || strings.Count(d, "linked:") != 1 {
		t.Errorf("details:\n%s", d)
	}
	r.Add(&profile.Event{T: profile.TypeSpan, Name: "aten::mm", Lane: "cpu/1", Start: 0, Dur: 3 * ms, Attrs: json.RawMessage(`{"kind":"cpu_op","ext":-3}`)})
	m.sel = 3 // the operator: its runtime call shares its ext
	if d := ansi.Strip(strings.Join(m.Details(r, 100), "\n")); !strings.Contains(d, "linked: runtime/1 cudaLaunchKernel") {
		t.Errorf("operator details:\n%s", d)
	}
	m.sel = 2
	if d := ansi.Strip(strings.Join(m.Details(r, 100), "\n")); strings.Contains(d, "linked:") {
		t.Errorf("link 51 found link 5:\n%s", d)
	}
}
