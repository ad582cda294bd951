package sessions

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/internal/flagtest"
)

// parseSub parses args for a subcommand under a parent with the --store
// flag of `gnnscope sessions`, and returns the options it would run with.
func parseSub[O any](t *testing.T, newCmd func(*cmdutil.Factory, func(*O) error) *cobra.Command, args ...string) (*O, error) {
	t.Helper()
	var got *O
	parent := &cobra.Command{Use: "sessions"}
	parent.PersistentFlags().String("store", "", "store root")
	sub := newCmd(flagtest.Factory(), func(o *O) error { got = o; return nil })
	parent.AddCommand(sub)
	return got, flagtest.Execute(parent, append([]string{sub.Name()}, args...)...)
}

func TestNewCmdLsFlags(t *testing.T) {
	opts, err := parseSub(t, NewCmdLs, "-r", "--json", "--store", "/s")
	if err != nil || !opts.Reverse || !opts.JSON || opts.Store != "/s" {
		t.Errorf("ls: %+v, %v", opts, err)
	}
	if _, err := parseSub(t, NewCmdLs, "extra"); err == nil || !strings.Contains(err.Error(), `unknown command "extra"`) {
		t.Errorf("ls extra: %v", err)
	}
	// sessions alone lists, with the same flags
	cmd := NewCmdSessions(flagtest.Factory())
	for _, name := range []string{"json", "reverse", "store"} {
		if cmd.Flags().Lookup(name) == nil && cmd.PersistentFlags().Lookup(name) == nil {
			t.Errorf("sessions lacks --%s", name)
		}
	}
}

func TestNewCmdShowFlags(t *testing.T) {
	opts, err := parseSub(t, NewCmdShow, "last", "--json", "--store", "/s")
	if err != nil || opts.Session != "last" || !opts.JSON || opts.Store != "/s" {
		t.Errorf("show: %+v, %v", opts, err)
	}
	if _, err := parseSub(t, NewCmdShow); err == nil || !strings.Contains(err.Error(), "show expects one SESSION") {
		t.Errorf("show without a session: %v", err)
	}
}

func TestNewCmdRmFlags(t *testing.T) {
	opts, err := parseSub(t, NewCmdRm, "a", "b", "-y")
	if err != nil || !slices.Equal(opts.Sessions, []string{"a", "b"}) || !opts.Yes || opts.Store != "" {
		t.Errorf("rm: %+v, %v", opts, err)
	}
	if _, err := parseSub(t, NewCmdRm); err == nil || !strings.Contains(err.Error(), "rm expects SESSION...") {
		t.Errorf("rm without a session: %v", err)
	}
}

func TestNewCmdExportFlags(t *testing.T) {
	opts, err := parseSub(t, NewCmdExport, "last", "-o", "s.tar.gz", "--force", "--json")
	if err != nil || opts.Session != "last" || opts.Output != "s.tar.gz" || !opts.Force || !opts.JSON {
		t.Errorf("export: %+v, %v", opts, err)
	}
	if _, err := parseSub(t, NewCmdExport, "last", "--output"); err == nil || !strings.Contains(err.Error(), "flag needs an argument: --output") {
		t.Errorf("export --output without a file: %v", err)
	}
}

func TestNewCmdImportFlags(t *testing.T) {
	opts, err := parseSub(t, NewCmdImport, "s.tar.gz", "--force", "--json", "--store", "/s")
	if err != nil || opts.File != "s.tar.gz" || !opts.Force || !opts.JSON || opts.Store != "/s" {
		t.Errorf("import: %+v, %v", opts, err)
	}
	if _, err := parseSub(t, NewCmdImport, "a", "b"); err == nil || !strings.Contains(err.Error(), "import expects one FILE") {
		t.Errorf("import of two files: %v", err)
	}
}

func TestNewCmdImportMaxSize(t *testing.T) {
	opts, err := parseSub(t, NewCmdImport, "--max-size", "2GiB", "x.tgz")
	if err != nil || opts.MaxSize != "2GiB" || opts.File != "x.tgz" {
		t.Errorf("import --max-size: %+v, %v", opts, err)
	}
}
