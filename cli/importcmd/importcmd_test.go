package importcmd

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/internal/flagtest"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/sessions"
)

func TestNewCmdTraceFlags(t *testing.T) {
	opts, err := flagtest.Parse(t, NewCmdTrace, "a.json", "b.json.gz", "--session", "last", "--run", "ext",
		"--zero", "2026-11-28T12:00:00Z", "--json", "--store", "/s")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(opts.Files, []string{"a.json", "b.json.gz"}) || opts.Session != "last" || opts.Run != "ext" ||
		opts.Zero != "2026-11-28T12:00:00Z" || !opts.JSON || opts.Store != "/s" {
		t.Errorf("options %+v", opts)
	}
	if _, err := flagtest.Parse(t, NewCmdTrace); err == nil || !strings.Contains(err.Error(), "requires at least 1 arg(s)") {
		t.Errorf("no file: %v", err)
	}
	if _, err := flagtest.Parse(t, NewCmdTrace, "a.json", "--run", "x"); err == nil || !strings.Contains(err.Error(), "go together") {
		t.Errorf("--run alone: %v", err)
	}
}

// TestImportTrace imports the CPU trace into a store and reads what the
// command printed as JSON.
func TestImportTrace(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	f := &cmdutil.Factory{IOStreams: ios, OpenStore: sessions.Open}
	store := t.TempDir()
	cmd := NewCmdTrace(f, nil)
	if err := flagtest.Execute(cmd, "../../profile/kineto/testdata/cpu_torch113.json.gz", "--json", "--store", store); err != nil {
		t.Fatal(err)
	}
	var res traceResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.Run != sessions.TraceRun || len(res.Files) != 1 || res.Files[0].Steps != 3 {
		t.Errorf("result %+v", res)
	}
	out.Reset()
	err := flagtest.Execute(NewCmdTrace(f, nil), "../../profile/kineto/testdata/cpu_torch113.json.gz",
		"--session", res.Session, "--run", "trace", "--store", store)
	if err == nil || !strings.Contains(err.Error(), "not wall-clock") {
		t.Errorf("attaching a trace timed from 0 without --zero: %v", err)
	}
	err = flagtest.Execute(NewCmdTrace(f, nil), "missing.json", "--store", store)
	if err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("a missing file: %v", err)
	}
}
