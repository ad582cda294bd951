package runner

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseSpecExternal(t *testing.T) {
	src := `
name = "mine"
[variants.base]
cmd = "python3 train.py"
[variants.opt]
cmd = "python3 train.py --workers '4'"
env = { OMP_NUM_THREADS = "4", EMPTY = "" }
cwd = "trainers"
auto = false
listen = "0.0.0.0:7000"
`
	spec, err := ParseSpec("mine.toml", []byte(src))
	if err != nil {
		t.Fatal(err) // commands alone need no data
	}
	if len(spec.Variants) != 2 {
		t.Fatalf("variants %+v", spec.Variants)
	}
	base, opt := spec.Variants[0], spec.Variants[1]
	if base.Name != "base" || base.External == nil || !reflect.DeepEqual(base.External.Argv, []string{"python3", "train.py"}) ||
		base.External.NoAuto || base.External.Cwd != "" || base.External.Env != nil || base.Overrides != nil {
		t.Errorf("base %+v %+v", base, base.External)
	}
	e := opt.External
	if opt.Name != "opt" || e == nil || !reflect.DeepEqual(e.Argv, []string{"python3", "train.py", "--workers", "4"}) ||
		e.Cmd != "python3 train.py --workers '4'" || !e.NoAuto || e.Cwd != "trainers" || e.Listen != "0.0.0.0:7000" || base.External.Listen != "" ||
		!reflect.DeepEqual(e.Env, map[string]string{"OMP_NUM_THREADS": "4", "EMPTY": ""}) {
		t.Errorf("opt %+v", e)
	}
	// mixed with an engine variant: data is needed again
	mixed := "[variants.baseline]\n[variants.mine]\ncmd = \"python3 t.py\"\n"
	if _, err := ParseSpec("m.toml", []byte(mixed)); err == nil || !strings.Contains(err.Error(), "no dataset") {
		t.Errorf("mixed spec without data: %v", err)
	}
	spec, err = ParseSpec("m.toml", []byte("data = \"synth-tiny\"\n"+mixed))
	if err != nil || len(spec.Variants) != 2 || spec.Variants[0].External != nil || spec.Variants[1].External == nil {
		t.Errorf("mixed spec: %+v, %v", spec, err)
	}
}

func TestParseSpecExternalBad(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"[variants.a]\ncmd = 3\n", `x.toml:2: variant "a": cmd must be a string`},
		{"[variants.a]\ncmd = \"\"\n", "x.toml:2: variant \"a\": command: empty"},
		{"[variants.a]\ncmd = \"python3 t.py | tee x\"\n", "shell syntax"},
		{"[variants.a]\ncmd = \"python3\"\nepochs = 3\n", `x.toml:3: variant "a" runs a command: key "epochs" is not one of cmd, env, cwd, auto`},
		{"data = \"synth-tiny\"\n[variants.a]\nenv = { A = \"1\" }\n", `x.toml:3: variant "a": key "env" goes with cmd`},
		{"[variants.a]\ncmd = \"python3\"\nenv = { A = 1 }\n", "env.A must be a string"},
		{"[variants.a]\ncmd = \"python3\"\nenv = \"A=1\"\n", "env must be a table of strings"},
		{"[variants.a]\ncmd = \"python3\"\ncwd = 1\n", "cwd must be a folder name"},
		{"[variants.a]\ncmd = \"python3\"\nauto = \"no\"\n", "auto must be true or false"},
		{"[variants.a]\ncmd = \"python3\"\nlisten = 7000\n", `x.toml:3: variant "a": listen must be a string`},
		{"[variants.a]\ncmd = \"python3\"\nlisten = \"box\"\n", `x.toml:3: variant "a": listen address "box" is not HOST:PORT`},
		{"data = \"synth-tiny\"\n[variants.a]\nlisten = \":1\"\n", `key "listen" goes with cmd`},
		{"[variants.\"../a\"]\ncmd = \"python3\"\n", `variant name "../a"`},
	} {
		if _, err := ParseSpec("x.toml", []byte(c.src)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.src, err, c.want)
		}
	}
}
