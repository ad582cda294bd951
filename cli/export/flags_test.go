package export

import (
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/flagtest"
)

func TestNewCmdTraceFlags(t *testing.T) {
	opts, err := flagtest.Parse(t, NewCmdTrace, "a", "b/optimized", "-o", "-", "--wall-clock", "-q", "--store", "/s", "--force")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(opts.Runs, []string{"a", "b/optimized"}) || opts.Output != "-" || !opts.WallClock || !opts.Quiet || opts.Store != "/s" || !opts.Force {
		t.Errorf("options %+v", opts)
	}
	opts, err = flagtest.Parse(t, NewCmdTrace, "last")
	if err != nil || opts.Output != "" || opts.WallClock || opts.Force {
		t.Errorf("defaults %+v, %v", opts, err)
	}
	if _, err := flagtest.Parse(t, NewCmdTrace); err == nil || !strings.Contains(err.Error(), "expects SESSION[/RUN] ...") {
		t.Errorf("no argument: %v", err)
	}
	if _, err := flagtest.Parse(t, NewCmdTrace, "last", "--format", "x"); err == nil || !strings.Contains(err.Error(), "unknown flag: --format") {
		t.Errorf("--format: %v", err)
	}
}
