package run

import (
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/flagtest"
)

func TestListenFlag(t *testing.T) {
	opts, err := flagtest.Parse(t, NewCmdRun, "--cmd", "python3 t.py", "--cmd", "b=python3 u.py", "--listen", "0.0.0.0:7000")
	if err != nil {
		t.Fatal(err)
	}
	_, variants, err := selectVariants(opts)
	if err != nil || len(variants) != 2 || variants[0].External.Listen != "0.0.0.0:7000" || variants[1].External.Listen != "0.0.0.0:7000" {
		t.Fatalf("--listen: %+v, %v", variants, err)
	}
	// a spec's command keeps its own listen key
	opts, err = flagtest.Parse(t, NewCmdRun, "--cmd", "python3 t.py", "--variants", "baseline", "--listen", ":7000")
	if err != nil {
		t.Fatal(err)
	}
	if _, variants, err = selectVariants(opts); err != nil || variants[0].External != nil || variants[1].External.Listen != ":7000" {
		t.Errorf("--listen beside an engine run: %+v, %v", variants, err)
	}
}

func TestListenRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "0.0.0.0:7000"}, "--listen goes with --cmd"},
		{[]string{"--cmd", "true", "--listen", "box"}, `--listen: listen address "box" is not HOST:PORT`},
		{[]string{"--cmd", "true", "--listen", "box:99999"}, "port out of range"},
		{[]string{"--cmd", "a=true", "--cmd", "b=true", "--listen", ":7000", "--parallel"}, "--listen with --parallel"},
		{[]string{"--cmd", "true", "--repeats", "2", "--listen", ":7000", "--parallel"}, "--listen with --parallel"},
	} {
		opts, err := flagtest.Parse(t, NewCmdRun, c.args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if _, _, err := selectVariants(opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
	opts, err := flagtest.Parse(t, NewCmdRun, "--cancel", "x", "--listen", ":7000")
	if err != nil {
		t.Fatal(err)
	}
	if err := runRun(opts); err == nil || !strings.Contains(err.Error(), "--listen does not go with") {
		t.Errorf("--cancel with --listen: %v", err)
	}
}
