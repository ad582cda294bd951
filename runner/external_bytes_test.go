//go:build linux

package runner

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// TestExternalJSONKeepsBytes: an External's strings survive a JSON round
// trip byte for byte, UTF-8 or not; one written before the byte fields
// still decodes.
func TestExternalJSONKeepsBytes(t *testing.T) {
	in := External{Cmd: "echo '\xff\xfe'", Argv: []string{"echo", "\xff\xfe", "é"}, Cwd: "/tmp/\xe9t\xe9", NoAuto: true}
	b, err := json.Marshal(&in)
	if err != nil {
		t.Fatal(err)
	}
	var out External
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.Cmd != in.Cmd || !slices.Equal(out.Argv, in.Argv) || out.Cwd != in.Cwd || !out.NoAuto {
		t.Errorf("round trip: %+v from %s", out, b)
	}
	var old External
	if err := json.Unmarshal([]byte(`{"cmd":"true","argv":["true"]}`), &old); err != nil || old.Cmd != "true" || !slices.Equal(old.Argv, []string{"true"}) {
		t.Errorf("plain External: %+v, %v", old, err)
	}
}

// TestExternalArgBytes: the repro of non-UTF-8 bytes in a --cmd argument:
// the command gets them unchanged, not as U+FFFD.
func TestExternalArgBytes(t *testing.T) {
	out := filepath.Join(t.TempDir(), "arg")
	arg := "caf\xe9-\xff\xfe"
	v, err := ParseCmd(`sh -c 'printf %s "$1" > "$2"' sh '` + arg + `' ` + out)
	if err != nil {
		t.Fatal(err)
	}
	v.Name = "a"
	_, s := launchTiny(t, 1, false, v)
	waitFor(t, "the run to end", func() bool {
		rs, err := s.RunState("a")
		return err == nil && rs.Status != profile.StatusRunning && rs.Status != profile.StatusUnknown
	})
	if rs, _ := s.RunState("a"); rs.Status != profile.StatusOK {
		t.Fatalf("run: %+v", rs)
	}
	got, err := os.ReadFile(out)
	if err != nil || !bytes.Equal(got, []byte(arg)) {
		t.Errorf("the command got %q, want %q (%v)", got, arg, err)
	}
}
