package compare

import (
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/flagtest"
)

func TestNewCmdCompareFlags(t *testing.T) {
	opts, err := flagtest.Parse(t, NewCmdCompare, "a/optimized", "b", "-f", "latex", "--baseline", "a/baseline", "-o", "t.tex", "--store", "/s")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(opts.Runs, []string{"a/optimized", "b"}) || opts.Format != "latex" || !opts.FormatSet || opts.Baseline != "a/baseline" ||
		opts.Output != "t.tex" || opts.Store != "/s" || opts.JSON {
		t.Errorf("options %+v", opts)
	}
	opts, err = flagtest.Parse(t, NewCmdCompare, "last", "--tta-target", "0.8")
	if err != nil || opts.TTATarget != 0.8 {
		t.Errorf("--tta-target: %+v, %v", opts, err)
	}
	opts, err = flagtest.Parse(t, NewCmdCompare, "last", "--json")
	if err != nil || opts.Format != "md" || opts.FormatSet || !opts.JSON {
		t.Errorf("--json: %+v, %v", opts, err)
	}
	if _, err := flagtest.Parse(t, NewCmdCompare); err == nil || !strings.Contains(err.Error(), "compare expects SESSION[/RUN] ...") {
		t.Errorf("no argument: %v", err)
	}
	// Parsed, then refused before the store is opened.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"last", "--json", "--format", "csv"}, "--json and --format csv contradict each other"},
		{[]string{"last", "--format", "xls"}, "--format: "},
		{[]string{"last", "--tta-target", "80"}, "--tta-target 80: an accuracy between 0 and 1"},
	} {
		opts, err := flagtest.Parse(t, NewCmdCompare, c.args...)
		if err != nil {
			t.Fatal(err)
		}
		if err := compareRun(opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}
