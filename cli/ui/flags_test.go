package ui

import (
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/flagtest"
)

func TestNewCmdUIFlags(t *testing.T) {
	opts, err := flagtest.Parse(t, NewCmdUI, "--no-color", "--ascii", "--home", "/data/g")
	if err != nil || !opts.NoColor || !opts.ASCII || opts.Home != "/data/g" {
		t.Errorf("ui: %+v, %v", opts, err)
	}
	opts, err = flagtest.Parse(t, NewCmdUI)
	if err != nil || opts.NoColor || opts.ASCII || opts.Home != "" {
		t.Errorf("defaults: %+v, %v", opts, err)
	}
	opts, err = flagtest.Parse(t, NewCmdUI, "last", "--ascii")
	if err != nil || opts.Session != "last" || !opts.ASCII {
		t.Errorf("ui last: %+v, %v", opts, err)
	}
	if _, err := flagtest.Parse(t, NewCmdUI, "a", "b"); err == nil || !strings.Contains(err.Error(), "takes at most one SESSION") {
		t.Errorf("ui a b: %v", err)
	}
}
