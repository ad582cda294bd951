package common

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	tea "charm.land/bubbletea/v2"

	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

// Launcher starts an experiment's variants in the background and returns
// the session it created. The workbench uses runner.Launch (exactly what
// `gnnscope run` does); tests substitute their own.
type Launcher func(exp runner.Experiment, variants []runner.Variant) (*sessions.Session, error)

// RunnerLauncher launches through runner.Launch into store, one run after
// the other (the default of `gnnscope run`).
func RunnerLauncher(store *sessions.Store) Launcher {
	return func(exp runner.Experiment, variants []runner.Variant) (*sessions.Session, error) {
		return runner.Launch(store, exp, variants, runner.LaunchOptions{})
	}
}

// Settings of the default experiment (the L key).
const (
	DefaultData   = "synth-tiny"
	DefaultModel  = "sage"
	DefaultEpochs = 50
)

// DefaultExperiment is what the L key launches: GraphSAGE on the synthetic
// synth-tiny preset for DefaultEpochs epochs, as the built-in baseline and
// optimized variants. It needs no dataset file and ends in seconds.
func DefaultExperiment() (runner.Experiment, []runner.Variant) {
	exp := runner.NewExperiment(DefaultData, DefaultModel)
	exp.Name = fmt.Sprintf("%s on %s (default)", DefaultModel, DefaultData)
	exp.Train.Epochs = DefaultEpochs
	return exp, runner.BuiltinVariants()
}

// SpecFile is the name of the TOML spec the workbench writes into the
// folder of a session it launches (`gnnscope run --spec` reruns it).
const SpecFile = "spec.toml"

// LaunchCmd launches an experiment with the context's Launcher in a
// command and reports the outcome as a LaunchedMsg. When spec is not
// empty it is written to the session folder as SpecFile.
func (c *Common) LaunchCmd(exp runner.Experiment, variants []runner.Variant, spec []byte) tea.Cmd {
	launch := c.Launch
	return func() tea.Msg {
		if launch == nil {
			return LaunchedMsg{Err: fmt.Errorf("launch: no launcher configured")}
		}
		s, err := launch(exp, variants)
		if err != nil {
			msg := LaunchedMsg{Err: fmt.Errorf("launch %s: %w", describe(exp), err)}
			if s != nil {
				msg.Session, msg.Dir = s.ID(), s.Dir()
			}
			return msg
		}
		msg := LaunchedMsg{Session: s.ID(), Dir: s.Dir()}
		if len(bytes.TrimSpace(spec)) > 0 {
			p := filepath.Join(s.Dir(), SpecFile)
			if err := os.WriteFile(p, spec, 0o644); err != nil {
				msg.Err = fmt.Errorf("session %s launched, but its spec was not saved: %w", s.ID(), err)
			}
		}
		return msg
	}
}

func describe(exp runner.Experiment) string {
	if exp.Name != "" {
		return fmt.Sprintf("%q", exp.Name)
	}
	return fmt.Sprintf("%s on %s", exp.Train.Model, exp.Data)
}
