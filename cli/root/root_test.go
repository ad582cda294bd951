package root

import (
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/sessions"
)

func TestNewCmdRoot(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	cmd := NewCmdRoot(&cmdutil.Factory{IOStreams: ios, OpenStore: sessions.Open})
	var names []string
	for _, c := range cmd.Commands() {
		names = append(names, c.Name())
	}
	want := []string{"bench", "compare", "datasets", "export", "gpucheck", "partition", "replay", "run", "sessions", "train", "ui", "worker"}
	for _, n := range want {
		if !slices.Contains(names, n) {
			t.Errorf("no %s command among %v", n, names)
		}
	}
	// Without a terminal, no command prints the help instead of the workbench.
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Available Commands:") || strings.Contains(out.String(), "worker") {
		t.Errorf("help:\n%s", out)
	}
}
