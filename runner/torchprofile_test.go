package runner

import (
	"slices"
	"strings"
	"testing"
)

func TestSpecTorchProfile(t *testing.T) {
	spec, err := ParseSpec("t.toml", []byte("[variants.a]\ncmd = \"python3 t.py\"\ntorch_profile = 12\n[variants.b]\ncmd = \"python3 t.py\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := spec.Variants[0].External, spec.Variants[1].External; a.TorchProfile != 12 || b.TorchProfile != 0 {
		t.Errorf("torch_profile %d, %d; want 12, 0", a.TorchProfile, b.TorchProfile)
	}
	for _, c := range []struct{ src, want string }{
		{"[variants.a]\ncmd = \"python3\"\ntorch_profile = \"10\"\n", `t.toml:3: variant "a": torch_profile must be a number of training steps from 0 to 10000`},
		{"[variants.a]\ncmd = \"python3\"\ntorch_profile = -1\n", "from 0 to 10000"},
		{"[variants.a]\ncmd = \"python3\"\ntorch_profile = 10001\n", "from 0 to 10000"},
		{"[variants.a]\ncmd = \"python3\"\ntorch_profile = 2.5\n", "from 0 to 10000"},
		{"[variants.a]\ncmd = \"python3\"\nauto = false\ntorch_profile = 3\n", "torch_profile needs the auto-instrumentation"},
		{"data = \"synth-tiny\"\n[variants.a]\ntorch_profile = 3\n", `key "torch_profile" goes with cmd`},
	} {
		if _, err := ParseSpec("t.toml", []byte(c.src)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.src, err, c.want)
		}
	}
}

func TestExternalEnvironTorchProfile(t *testing.T) {
	base := []string{"GNNSCOPE_TORCH_PROFILE=7", "HOME=/h"}
	// unset: the launcher's (or the variant's env) value is kept, for
	// scripts that set it themselves
	env := (&External{}).environ(base, "j", "s", "r", "r", "/c", nil)
	if !slices.Contains(env, "GNNSCOPE_TORCH_PROFILE=7") {
		t.Errorf("kept: %q", env)
	}
	// set: one value, the run's, over both
	ext := &External{TorchProfile: 10, Env: map[string]string{"GNNSCOPE_TORCH_PROFILE": "3"}}
	env = ext.environ(base, "j", "s", "r", "r", "/c", nil)
	var got []string
	for _, kv := range env {
		if strings.HasPrefix(kv, EnvTorchProfile+"=") {
			got = append(got, kv)
		}
	}
	if !slices.Equal(got, []string{"GNNSCOPE_TORCH_PROFILE=10"}) {
		t.Errorf("set: %q", env)
	}
	if err := CheckTorchProfile(0); err != nil {
		t.Error(err)
	}
	if err := CheckTorchProfile(MaxTorchProfile + 1); err == nil {
		t.Error("no error above the maximum")
	}
}
