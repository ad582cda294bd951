package root

import (
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/sessions"
)

// TestUserErrors are the repros of a new user's mistakes: each error says
// what was wrong in the user's terms, never Go's strconv text or cobra's
// bare "accepts 1 arg(s)", and a near-miss dataset name gets a
// suggestion. None of them launches anything.
func TestUserErrors(t *testing.T) {
	t.Setenv("GNNSCOPE_HOME", t.TempDir())
	for _, c := range []struct {
		args       []string
		want, lack []string
	}{
		{[]string{"run", "--epochs", "abc", "--data", "synth-tiny"}, []string{`--epochs: "abc" is not a whole number`, "--help"}, []string{"strconv"}},
		{[]string{"run", "--lr", "fast", "--data", "synth-tiny"}, []string{`--lr: "fast" is not a number`}, []string{"strconv"}},
		{[]string{"run", "--threads", "-3", "--data", "synth-tiny"}, []string{"threads -3: want 0 (all cores) or a positive count"}, nil},
		{[]string{"run", "--data", "synth-smal", "--epochs", "1"}, []string{`did you mean "synth-small"?`}, nil},
		{[]string{"sessions", "show"}, []string{"gnnscope sessions show expects one SESSION"}, []string{"accepts 1 arg(s)"}},
		{[]string{"sessions", "show", "a", "b"}, []string{"gnnscope sessions show expects one SESSION"}, []string{"accepts 1 arg(s)"}},
		{[]string{"replay"}, []string{"gnnscope replay expects one SESSION[/RUN]"}, []string{"accepts 1 arg(s)"}},
		{[]string{"compare"}, []string{"gnnscope compare expects SESSION[/RUN]"}, []string{"requires at least"}},
	} {
		ios, _, _, _ := iostreams.Test()
		cmd := NewCmdRoot(&cmdutil.Factory{IOStreams: ios, OpenStore: sessions.Open})
		cmd.SetArgs(c.args)
		err := cmd.Execute()
		if err == nil {
			t.Errorf("%v: no error", c.args)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q lacks %q", c.args, err, w)
			}
		}
		for _, l := range c.lack {
			if strings.Contains(err.Error(), l) {
				t.Errorf("%v: error %q has %q", c.args, err, l)
			}
		}
	}
}
