package launch

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
)

// Launcher starts an experiment's variants in the background and returns
// the session it created. The workbench uses Runner (exactly what
// `gnnscope run` does); tests substitute their own.
type Launcher func(exp runner.Experiment, variants []runner.Variant) (*sessions.Session, error)

// Runner launches through runner.Launch into store, one run after the
// other (the default of `gnnscope run`). The workers run this program's
// executable, or a lasting copy of it when `go run` built it into a
// temporary folder (see LastingExecutable).
func Runner(store *sessions.Store) Launcher {
	return func(exp runner.Experiment, variants []runner.Variant) (*sessions.Session, error) {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find the gnnscope executable: %w", err)
		}
		if exe, err = LastingExecutable(exe, store.Root()); err != nil {
			return nil, err
		}
		return runner.Launch(store, exp, variants, runner.LaunchOptions{Executable: exe})
	}
}

// LastingExecutable returns an executable for detached workers that
// outlives this process: exe itself, unless it lies in a go-build
// temporary folder, which `go run` deletes when it exits (the sequencer
// could then not start the next run after the workbench quits); such a
// binary is copied once to root/bin/gnnscope-HASH and the copy returned.
func LastingExecutable(exe, root string) (string, error) {
	if !strings.Contains(filepath.ToSlash(exe), "/go-build") {
		return exe, nil
	}
	src, err := os.Open(exe)
	if err != nil {
		return "", fmt.Errorf("copy the gnnscope executable: %w", err)
	}
	defer src.Close()
	h := sha256.New()
	if _, err := io.Copy(h, src); err != nil {
		return "", fmt.Errorf("copy the gnnscope executable: %w", err)
	}
	dst := filepath.Join(root, "bin", "gnnscope-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(dst); err == nil {
		return dst, nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return "", fmt.Errorf("copy the gnnscope executable: %w", err)
	}
	err = sessions.WriteFileAtomic(dst, 0o700, func(w io.Writer) error {
		if _, err := src.Seek(0, io.SeekStart); err != nil {
			return err
		}
		_, err := io.Copy(w, src)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("copy the gnnscope executable: %w", err)
	}
	return dst, nil
}

// Settings of the default experiment (the L key, and the form's
// defaults). DefaultRepeats interleaved repeats give the speedup an
// interval over runs (one run's epochs give none); with DefaultEpochs
// epochs of synth-tiny the six runs end within a minute on an idle
// two-core host.
const (
	DefaultData    = "synth-tiny"
	DefaultModel   = "sage"
	DefaultEpochs  = 30
	DefaultRepeats = 3
)

// DefaultExperiment is what the L key launches: GraphSAGE on the synthetic
// synth-tiny preset for DefaultEpochs epochs, as the default variants
// (baseline and optimized), DefaultRepeats times each, interleaved. It
// needs no dataset file.
func DefaultExperiment() (runner.Experiment, []runner.Variant) {
	exp := runner.NewExperiment(DefaultData, DefaultModel)
	exp.Name = fmt.Sprintf("%s on %s (default)", DefaultModel, DefaultData)
	exp.Train.Epochs = DefaultEpochs
	exp.Repeats = DefaultRepeats
	return exp, runner.DefaultVariants()
}

// SpecFile is the name of the TOML spec the workbench writes into the
// folder of a session it launches (`gnnscope run --spec` reruns it).
const SpecFile = "spec.toml"

// Cmd launches an experiment with l in a command and reports the outcome
// as a common.LaunchedMsg. When spec is not empty it is written to the
// session folder as SpecFile. A nil Launcher reports an error.
func (l Launcher) Cmd(exp runner.Experiment, variants []runner.Variant, spec []byte) tea.Cmd {
	return func() tea.Msg {
		if l == nil {
			return common.LaunchedMsg{Err: errors.New("launch: no launcher configured")}
		}
		s, err := l(exp, variants)
		if err != nil {
			msg := common.LaunchedMsg{Err: fmt.Errorf("launch %s: %w", describe(exp), err)}
			if s != nil {
				msg.Session, msg.Dir = s.ID(), s.Dir()
			}
			return msg
		}
		msg := common.LaunchedMsg{Session: s.ID(), Dir: s.Dir()}
		if len(bytes.TrimSpace(spec)) > 0 {
			p := filepath.Join(s.Dir(), SpecFile)
			err := sessions.WriteStoreFile(p, 0o600, func(w io.Writer) error { _, err := w.Write(spec); return err })
			if err != nil {
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
