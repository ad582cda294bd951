package runner

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

func TestSplitCommand(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"python3 train.py --lr 0.01", []string{"python3", "train.py", "--lr", "0.01"}},
		{"  a\t b\n", []string{"a", "b"}},
		{`sh -c 'echo "x" >&2; exit 1'`, []string{"sh", "-c", `echo "x" >&2; exit 1`}},
		{`echo "a \"b\" \$HOME \n" c`, []string{"echo", `a "b" $HOME \n`, "c"}},
		{`a\ b 'c'"d"e ''`, []string{"a b", "cde", ""}},
		{`python3 t.py --name=a=b`, []string{"python3", "t.py", "--name=a=b"}},
	} {
		got, err := SplitCommand(c.in)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"", "empty"},
		{"  ", "empty"},
		{"echo 'x", "unterminated '"},
		{`echo "x`, `unterminated "`},
		{"python3 t.py | tee log", `'|' is shell syntax`},
		{"python3 t.py > log", `'>' is shell syntax`},
		{"python3 $HOME/t.py", `'$' is shell syntax`},
		{"a && b", `'&' is shell syntax`},
	} {
		if _, err := SplitCommand(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SplitCommand(%q): error %v, want %q", c.in, err, c.want)
		}
	}
}

func TestParseCmd(t *testing.T) {
	for _, c := range []struct{ in, name, prog string }{
		{"python3 train.py", DefaultExternalName, "python3"},
		{"opt=python3 train.py --workers 4", "opt", "python3"},
		{"python3 train.py --lr=0.1", DefaultExternalName, "python3"},
		{"a.b-c_1='python3' x", "a.b-c_1", "python3"},
	} {
		v, err := ParseCmd(c.in)
		if err != nil || v.Name != c.name || v.External == nil || v.External.Argv[0] != c.prog {
			t.Errorf("ParseCmd(%q) = %+v, %v", c.in, v, err)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"../x=python3 t.py", `run name "../x"`},
		{"-x=python3", `run name "-x"`},
		{"opt=", "empty"},
		{"opt=python3 t.py; rm x", "shell syntax"},
	} {
		if _, err := ParseCmd(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseCmd(%q): error %v, want %q", c.in, err, c.want)
		}
	}
}

func TestExternalPrepare(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "run.sh"), []byte("#!/bin/sh\n"), 0o755)
	ext := &External{Cmd: "./run.sh", Argv: []string{"./run.sh"}, Cwd: "sub", Env: map[string]string{"A": "1"}}
	got, err := ext.prepare(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Cwd != filepath.Join(dir, "sub") || ext.Cwd != "sub" || got.Env["A"] != "1" {
		t.Errorf("prepared %+v from %+v", got, ext)
	}
	got.Env["A"] = "2"
	if ext.Env["A"] != "1" {
		t.Error("prepare shares the environment map")
	}
	if got, err := (&External{Cmd: "sh", Argv: []string{"sh"}}).prepare(dir); err != nil || got.Cwd != dir {
		t.Errorf("no cwd: %+v, %v", got, err)
	}
	for _, c := range []struct {
		ext  External
		want string
	}{
		{External{Argv: []string{"sh"}, Cwd: "nope"}, "cwd"},
		{External{Argv: []string{"sh"}, Cwd: "sub/run.sh"}, "not a folder"},
		{External{Argv: []string{"./nope.sh"}}, "not an executable file"},
		{External{Argv: []string{"no-such-program-gnnscope"}}, "executable file not found"},
	} {
		if _, err := c.ext.prepare(dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("prepare(%+v): error %v, want %q", c.ext, err, c.want)
		}
	}
}

func TestExternalEnviron(t *testing.T) {
	base := []string{"HOME=/h", "PYTHONPATH=/user/lib", "GNNSCOPE_RUN=stale", "KEEP=1", "OVER=old"}
	ext := &External{Env: map[string]string{"OVER": "new", "X": "y"}}
	env := ext.environ(base, "/s/runs/r.jsonl", "sid", "r.r2", "r", "/s/pyclient", nil)
	want := []string{"HOME=/h", "KEEP=1", "OVER=new", "X=y", "GNNSCOPE_JOURNAL=/s/runs/r.jsonl", "GNNSCOPE_SESSION=sid",
		"GNNSCOPE_RUN=r.r2", "GNNSCOPE_VARIANT=r", "GNNSCOPE_AUTO=1", "PYTHONPATH=/s/pyclient" + string(os.PathListSeparator) + "/user/lib"}
	if !slices.Equal(env, want) {
		t.Errorf("environ\n got %q\nwant %q", env, want)
	}
	// --no-auto, and a PYTHONPATH of the variant's env
	ext = &External{NoAuto: true, Env: map[string]string{"PYTHONPATH": "/mine"}}
	env = ext.environ([]string{"PYTHONPATH=/user/lib"}, "j", "s", "r", "r", "/c", nil)
	if !slices.Contains(env, "GNNSCOPE_AUTO=0") || !slices.Contains(env, "PYTHONPATH=/c"+string(os.PathListSeparator)+"/mine") {
		t.Errorf("no-auto environ %q", env)
	}
	if env = (&External{}).environ(nil, "j", "s", "r", "r", "/c", nil); !slices.Contains(env, "PYTHONPATH=/c") {
		t.Errorf("environ without PYTHONPATH %q", env)
	}
}

// TestEnvironCollector: a run with a collector gets its address and
// token over the launcher's and the variant's; one without keeps the
// variant's but never the launcher's (another run's collector).
func TestEnvironCollector(t *testing.T) {
	base := []string{"GNNSCOPE_COLLECTOR=stale:1", "GNNSCOPE_COLLECTOR_TOKEN=old", "KEEP=1"}
	ext := &External{Env: map[string]string{"GNNSCOPE_COLLECTOR": "mine:2"}}
	env := ext.environ(base, "j", "s", "r", "r", "/c", &collectorEnv{addr: "box:7000", token: "abc"})
	if !slices.Contains(env, "GNNSCOPE_COLLECTOR=box:7000") || !slices.Contains(env, "GNNSCOPE_COLLECTOR_TOKEN=abc") ||
		slices.Contains(env, "GNNSCOPE_COLLECTOR=stale:1") || slices.Contains(env, "GNNSCOPE_COLLECTOR=mine:2") || !slices.Contains(env, "KEEP=1") {
		t.Errorf("environ with a collector %q", env)
	}
	env = ext.environ(base, "j", "s", "r", "r", "/c", nil)
	if !slices.Contains(env, "GNNSCOPE_COLLECTOR=mine:2") || slices.ContainsFunc(env, func(kv string) bool {
		return strings.HasPrefix(kv, "GNNSCOPE_COLLECTOR_TOKEN=") || kv == "GNNSCOPE_COLLECTOR=stale:1"
	}) {
		t.Errorf("environ without a collector %q", env)
	}
}

func TestCheckListen(t *testing.T) {
	for addr, ok := range map[string]bool{"0.0.0.0:7000": true, ":7000": true, "[::1]:0": true, "box:65535": true,
		"box": false, "box:http": false, "box:70000": false, "::1:80": false, "": false} {
		if err := CheckListen(addr); (err == nil) != ok {
			t.Errorf("CheckListen(%q): %v", addr, err)
		}
	}
}

func TestExitOutcome(t *testing.T) {
	failed := exec.Command("sh", "-c", "exit 3").Run()
	killed := exec.Command("sh", "-c", "kill -9 $$").Run()
	for _, c := range []struct {
		err     error
		stopped bool
		stderr  string
		status  profile.Status
		text    string
	}{
		{nil, false, "", profile.StatusOK, ""},
		{nil, true, "", profile.StatusCanceled, "canceled"},
		{killed, true, "", profile.StatusCanceled, "canceled"},
		{failed, false, "Traceback\nValueError: x", profile.StatusFailed, "Traceback\nValueError: x"},
		{failed, false, "", profile.StatusFailed, "exit status 3"},
		{killed, false, "", profile.StatusCrashed, "killed by signal 9"},
		{errors.New("odd"), false, "", profile.StatusFailed, "odd"},
	} {
		st, text := exitOutcome(c.err, c.stopped, c.stderr)
		if st != c.status || !strings.HasPrefix(text, c.text) {
			t.Errorf("exitOutcome(%v, %v, %q) = %s, %q; want %s, %q", c.err, c.stopped, c.stderr, st, text, c.status, c.text)
		}
	}
}

func TestTailBuffer(t *testing.T) {
	tb := &tailBuffer{max: 64}
	for i := range 20 {
		tb.Write([]byte(strings.Repeat("x", i%3) + "line\n\n"))
	}
	tb.Write([]byte("last"))
	got := tb.lines(3)
	if got != "line\nxline\nlast" {
		t.Errorf("lines(3) = %q", got)
	}
	if len(tb.buf) > 64 {
		t.Errorf("kept %d bytes", len(tb.buf))
	}
}

func TestResolveExternal(t *testing.T) {
	ext := &External{Cmd: "true", Argv: []string{"true"}}
	// commands alone need no experiment
	res, err := Resolve(Experiment{}, []Variant{{Name: "a", External: ext}})
	if err != nil || len(res) != 1 || res[0].External != ext {
		t.Fatalf("Resolve(external) = %+v, %v", res, err)
	}
	// beside an engine variant they do
	if _, err := Resolve(Experiment{}, []Variant{{Name: "a", External: ext}, {Name: "baseline"}}); err == nil || !strings.Contains(err.Error(), "no dataset") {
		t.Errorf("Resolve(mixed, no data): %v", err)
	}
	exp := NewExperiment("synth-tiny", "sage")
	if res, err = Resolve(exp, []Variant{{Name: "baseline"}, {Name: "a", External: ext}}); err != nil || len(res) != 2 || res[0].Config.Epochs == 0 {
		t.Errorf("Resolve(mixed) = %+v, %v", res, err)
	}
	_, err = Resolve(exp, []Variant{{Name: "a", External: ext}, {Name: "a", External: ext}, {Name: "b", External: ext, Overrides: map[string]any{"epochs": 1}}})
	if err == nil || !strings.Contains(err.Error(), "twice") || !strings.Contains(err.Error(), "takes no config keys") {
		t.Errorf("Resolve(bad externals): %v", err)
	}
}

func TestRepeatRuns(t *testing.T) {
	res := []Resolved{{Variant: Variant{Name: "a"}}, {Variant: Variant{Name: "b"}}}
	runs, of, err := repeatRuns(res, 1)
	if err != nil || !slices.Equal(runs, []string{"a", "b"}) || of != nil {
		t.Errorf("repeats 1: %v %v %v", runs, of, err)
	}
	runs, of, err = repeatRuns(res, 2)
	if err != nil || !slices.Equal(runs, []string{"a.r1", "b.r1", "b.r2", "a.r2"}) || of["b.r2"] != "b" || len(of) != 4 {
		t.Errorf("repeats 2: %v %v %v", runs, of, err)
	}
	three := append(res, Resolved{Variant: Variant{Name: "c"}})
	runs, _, err = repeatRuns(three, 3)
	want := []string{"a.r1", "b.r1", "c.r1", "c.r2", "b.r2", "a.r2", "a.r3", "b.r3", "c.r3"}
	if err != nil || !slices.Equal(runs, want) {
		t.Errorf("repeats 3 of 3 variants: %v %v, want ABBA order %v", runs, err, want)
	}
	clash := []Resolved{{Variant: Variant{Name: "a"}}, {Variant: Variant{Name: "a.r1"}}}
	if _, _, err := repeatRuns(clash, 2); err == nil || !strings.Contains(err.Error(), "clashes") {
		t.Errorf("clashing repeats: %v", err)
	}
	long := []Resolved{{Variant: Variant{Name: strings.Repeat("x", 127)}}}
	if _, _, err := repeatRuns(long, 2); err == nil {
		t.Error("a repeat name over 128 bytes was accepted")
	}
}
