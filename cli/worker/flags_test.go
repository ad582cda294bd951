package worker

import (
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/flagtest"
)

func TestNewCmdWorkerFlags(t *testing.T) {
	opts, err := flagtest.Parse(t, NewCmdWorker, "--session", "20261122-153045-ab12", "--run", "baseline", "--store", "/s")
	if err != nil || opts.Session != "20261122-153045-ab12" || opts.Run != "baseline" || opts.All || opts.Store != "/s" {
		t.Errorf("worker --run: %+v, %v", opts, err)
	}
	opts, err = flagtest.Parse(t, NewCmdWorker, "--session", "s", "--all")
	if err != nil || !opts.All || opts.Run != "" {
		t.Errorf("worker --all: %+v, %v", opts, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--run", "baseline"}, "--session is required"},
		{[]string{"--session", "s"}, "give exactly one of --run NAME and --all"},
		{[]string{"--session", "s", "--run", "r", "--all"}, "give exactly one of --run NAME and --all"},
	} {
		if _, err := flagtest.Parse(t, NewCmdWorker, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}
