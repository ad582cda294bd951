package launch

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
)

// Issue 37, point 6: L then q at once. The launch the L key started is
// under way when the program ends; Wait lets it complete and says how it
// ended, instead of the process exiting in its middle.
func TestPendingLaunchCompletesAfterQuit(t *testing.T) {
	st, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	var p Pending
	l := p.Wrap(func(exp runner.Experiment, _ []runner.Variant) (*sessions.Session, error) {
		close(entered)
		<-release
		return st.Create(sessions.SessionMeta{Name: exp.Name})
	})
	exp, variants := DefaultExperiment()
	msgs := make(chan common.LaunchedMsg, 1)
	go func() { msgs <- l.Cmd(exp, variants, nil)().(common.LaunchedMsg) }()
	<-entered
	// the program has quit: nothing has ended yet
	if outcomes, still := p.Wait(0); len(outcomes) != 0 || len(still) != 1 {
		t.Fatalf("under way: %q, %q", outcomes, still)
	}
	close(release)
	outcomes, still := p.Wait(time.Hour)
	if len(still) != 0 || len(outcomes) != 1 || !strings.Contains(outcomes[0], "launched session") {
		t.Fatalf("after Wait: %q, still %q", outcomes, still)
	}
	msg := <-msgs
	if msg.Err != nil {
		t.Fatal(msg.Err)
	}
	if _, err := st.Get(msg.Session); err != nil {
		t.Errorf("the launched session: %v", err)
	}
}

// A launch that fails says so.
func TestPendingLaunchFails(t *testing.T) {
	var p Pending
	l := p.Wrap(func(runner.Experiment, []runner.Variant) (*sessions.Session, error) {
		return nil, errors.New("disk full")
	})
	exp, variants := DefaultExperiment()
	if msg := l.Cmd(exp, variants, nil)().(common.LaunchedMsg); msg.Err == nil {
		t.Fatal("no error")
	}
	outcomes, still := p.Wait(time.Hour)
	if len(still) != 0 || len(outcomes) != 1 || !strings.Contains(outcomes[0], "did not complete: disk full") {
		t.Errorf("%q, %q", outcomes, still)
	}
}
