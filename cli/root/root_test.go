package root

import (
	"runtime/debug"
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
	want := []string{"bench", "compare", "datasets", "explain", "export", "gpucheck", "partition", "replay", "run", "sessions", "train", "ui", "worker"}
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

// TestVersion: --version names the module version, the revision (with its
// time, and whether the tree was modified) and the Go version.
func TestVersion(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "06ecfd1c0ffee0123456789abcdef0123456789a"},
		{Key: "vcs.time", Value: "2026-11-27T10:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}}
	if got, want := versionOf(info), "(devel) revision 06ecfd1c0ffe (2026-11-27T10:00:00Z, modified) go1.26.8"; got != want {
		t.Errorf("versionOf = %q, want %q", got, want)
	}
	if got := versionOf(&debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}}); got != "v0.3.0" {
		t.Errorf("without VCS: %q", got)
	}
	ios, _, out, _ := iostreams.Test()
	cmd := NewCmdRoot(&cmdutil.Factory{IOStreams: ios, OpenStore: sessions.Open})
	cmd.SetArgs([]string{"--version"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.HasPrefix(got, "gnnscope ") || !strings.HasSuffix(got, "\n") || strings.Count(got, "\n") != 1 {
		t.Errorf("--version printed %q", got)
	}
}

// TestHelpTopic: `gnnscope help spec` prints the topic, and the root's
// help lists the topics.
func TestHelpTopic(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	cmd := NewCmdRoot(&cmdutil.Factory{IOStreams: ios, OpenStore: sessions.Open})
	cmd.SetArgs([]string{"help", "spec"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "[variants.optimized]") || !strings.Contains(got, "Built-in variants") {
		t.Errorf("help spec:\n%s", got)
	}
	out.Reset()
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "Additional help topics:") || !strings.Contains(got, "gnnscope external") {
		t.Errorf("help:\n%s", got)
	}
}
