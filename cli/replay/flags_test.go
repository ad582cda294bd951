package replay

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/cli/internal/flagtest"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/sessions"
)

func TestNewCmdReplayFlags(t *testing.T) {
	opts, err := flagtest.Parse(t, NewCmdReplay, "last/optimized", "--speed", "x10", "--from", "30s", "--headless", "--json", "-q", "--store", "/data/g")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Session != "last/optimized" || opts.Speed != "x10" || opts.From != 30*time.Second || !opts.Headless || !opts.JSON || !opts.Quiet || opts.Store != "/data/g" {
		t.Errorf("options %+v", opts)
	}
	opts, err = flagtest.Parse(t, NewCmdReplay, "last")
	if err != nil || opts.Speed != "1" || opts.From != 0 || opts.Headless {
		t.Errorf("defaults %+v, %v", opts, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "replay expects one SESSION[/RUN]"},
		{[]string{"a", "b"}, "replay expects one SESSION[/RUN]"},
		{[]string{"last", "--from", "soon"}, `invalid argument "soon" for "--from"`},
	} {
		if _, err := flagtest.Parse(t, NewCmdReplay, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
	// Parsed, then refused before the store is opened.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"last", "--speed", "0"}, `--speed "0": want a positive factor`},
		{[]string{"last", "--from", "-1s"}, "--from -1s: want a position >= 0"},
		{[]string{"/etc"}, `"/etc": not a session reference`},
	} {
		opts, err := flagtest.Parse(t, NewCmdReplay, c.args...)
		if err != nil {
			t.Fatal(err)
		}
		if err := replayRun(opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}

// TestReplayOpensViewOnTerminal: on a terminal, without --headless or
// --json, replay opens the interactive view of the resolved session; in
// a pipe it prints events and says why.
func TestReplayOpensViewOnTerminal(t *testing.T) {
	home := t.TempDir()
	st, err := sessions.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(sessions.SessionMeta{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tty := range []bool{true, false} {
		ios, _, out, errOut := iostreams.Test()
		ios.SetStdinTTY(tty)
		ios.SetStdoutTTY(tty)
		var opened []string
		opts := &ReplayOptions{IO: ios, OpenStore: sessions.Open, Store: home, Session: "last", Speed: "max",
			OpenView: func(root, id string) error { opened = append(opened, root, id); return nil }}
		err := replayRun(opts)
		if tty {
			if err != nil || !slices.Equal(opened, []string{home, s.ID()}) {
				t.Errorf("terminal: opened %q, %v", opened, err)
			}
			continue
		}
		if opened != nil || !strings.Contains(errOut.String(), "not a terminal: printing events") {
			t.Errorf("pipe: opened %q, %v; stdout %q, stderr %q", opened, err, out, errOut)
		}
	}
}
