package explain

import (
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/flagtest"
)

func TestNewCmdExplainFlags(t *testing.T) {
	opts, err := flagtest.Parse(t, NewCmdExplain, "last/base", "--epochs", "--tta-target", "0.8", "--baseline", "b", "-f", "md", "-o", "x.md", "--force", "--store", "/s")
	if err != nil || opts.Ref != "last/base" || !opts.Epochs || opts.TTATarget != 0.8 || opts.Baseline != "b" || opts.Format != FormatMarkdown ||
		opts.Output != "x.md" || !opts.Force || opts.Store != "/s" {
		t.Errorf("%+v, %v", opts, err)
	}
	opts, err = flagtest.Parse(t, NewCmdExplain, "last")
	if err != nil || opts.Format != FormatText || opts.Epochs || opts.TTATarget != 0 {
		t.Errorf("defaults: %+v, %v", opts, err)
	}
	if _, err := flagtest.Parse(t, NewCmdExplain); err == nil || !strings.Contains(err.Error(), "SESSION[/RUN]") {
		t.Errorf("no argument: %v", err)
	}
}
