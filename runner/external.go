package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gnnscope/gnnscope/sessions"
)

// DefaultExternalName is the run name of a command given without a name
// (`gnnscope run --cmd '…'`).
const DefaultExternalName = "external"

// Environment variables an external command gets (see the Python client).
const (
	EnvJournal = "GNNSCOPE_JOURNAL" // absolute path of the run's journal
	EnvSession = "GNNSCOPE_SESSION" // session id
	EnvRun     = "GNNSCOPE_RUN"     // run name
	EnvVariant = "GNNSCOPE_VARIANT" // variant name (the run name without a repeat suffix)
	EnvAuto    = "GNNSCOPE_AUTO"    // "1": the client instruments torch by itself; "0": explicit API only
	// EnvTorchProfile asks the client to capture that many training steps
	// with torch.profiler (after a few warm-up steps) into
	// runs/<run>.torch.json; set only when External.TorchProfile is.
	EnvTorchProfile = "GNNSCOPE_TORCH_PROFILE"
	// EnvCollector is the address ranks stream their events to, and
	// EnvCollectorToken the token they present (set only when
	// External.Listen is: docs/collector.md).
	EnvCollector      = "GNNSCOPE_COLLECTOR"
	EnvCollectorToken = "GNNSCOPE_COLLECTOR_TOKEN"
)

// pyclientDir is the session folder's copy of the embedded Python client.
const pyclientDir = "pyclient"

// External is a variant that runs a command of the user's (an external
// trainer, which writes its journal through the Python client) instead of
// the engine.
type External struct {
	// Cmd is the command line as given.
	Cmd string `json:"cmd"`
	// Argv is Cmd split into words (SplitCommand): the command is not run
	// by a shell.
	Argv []string `json:"argv"`
	// Env is set in the command's environment, over the launcher's.
	Env map[string]string `json:"env,omitempty"`
	// Cwd is the command's working folder: relative to the folder
	// `gnnscope run` was started from, absolute once launched ("" = that
	// folder).
	Cwd string `json:"cwd,omitempty"`
	// NoAuto turns the client's auto-instrumentation off: the client is
	// still on PYTHONPATH for scripts that import gnnscope themselves.
	NoAuto bool `json:"no_auto,omitempty"`
	// TorchProfile, when above 0, is the number of training steps the
	// client captures with torch.profiler (EnvTorchProfile); it needs the
	// auto-instrumentation, which finds the steps.
	TorchProfile int `json:"torch_profile,omitempty"`
	// Listen, when set, is the HOST:PORT a collector listens on for the
	// run's ranks on other machines (runner/collector), set in the
	// command's environment as EnvCollector.
	Listen string `json:"listen,omitempty"`
}

// CheckListen checks a collector's listen address: HOST:PORT, the host
// possibly empty (every address), the port a number.
func CheckListen(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		var n int
		if n, err = strconv.Atoi(port); err == nil && (n < 0 || n > 65535) {
			err = errors.New("port out of range")
		}
	}
	if err != nil {
		return fmt.Errorf("listen address %q is not HOST:PORT (%v)", addr, err)
	}
	return nil
}

// MaxTorchProfile is the most training steps a torch.profiler window may
// hold: each step's operators stay in the trainer's memory until the
// window ends.
const MaxTorchProfile = 10000

// CheckTorchProfile checks a number of steps to capture with
// torch.profiler (0 = none).
func CheckTorchProfile(steps int) error {
	if steps < 0 || steps > MaxTorchProfile {
		return fmt.Errorf("torch profile: %d steps is not between 0 (none) and %d", steps, MaxTorchProfile)
	}
	return nil
}

// NewExternal splits a command line (see SplitCommand).
func NewExternal(cmd string) (*External, error) {
	argv, err := SplitCommand(cmd)
	if err != nil {
		return nil, err
	}
	return &External{Cmd: cmd, Argv: argv}, nil
}

// ParseCmd reads the value of a `--cmd` flag: NAME=COMMAND, or a command
// alone, named DefaultExternalName. NAME is the text before the first '='
// when it is a valid run name (so `--cmd 'python3 t.py --lr=0.1'` has no
// name: the text before '=' has a space).
func ParseCmd(value string) (Variant, error) {
	name, cmd := DefaultExternalName, value
	if n, rest, ok := strings.Cut(value, "="); ok && n != "" && !strings.ContainsAny(n, " \t'\"") {
		if err := checkRunName(n); err != nil {
			return Variant{}, fmt.Errorf("--cmd %s: %w", value, err)
		}
		name, cmd = n, rest
	}
	ext, err := NewExternal(cmd)
	if err != nil {
		return Variant{}, fmt.Errorf("--cmd %s: %w", value, err)
	}
	return Variant{Name: name, External: ext}, nil
}

// checkRunName checks a run name (checkKindName) with an error that starts
// `run name "NAME"`.
func checkRunName(name string) error { return checkKindName("run", name) }

// checkVariantName checks a variant name (checkKindName) with an error that
// starts `variant name "NAME"`.
func checkVariantName(name string) error { return checkKindName("variant", name) }

// checkKindName checks a variant or run name: a valid file name
// (sessions.CheckName) that is not the name of a distributed run's rank
// journal ("<run>.rank<R>", which readers merge into run <run>). The
// error starts with kind and the quoted name and wraps
// sessions.ErrInvalidName.
func checkKindName(kind, name string) error {
	if err := sessions.CheckName(kind, name); err != nil {
		return err
	}
	if run, r, rank := sessions.SplitRankRun(name); rank {
		return &sessions.NameError{Kind: kind, Name: name,
			Reason: fmt.Sprintf("a name ending in .rank%d is rank %d's journal of run %q", r, r, run)}
	}
	return nil
}

// shellOnly are the characters that mean something to a shell only.
const shellOnly = "|&;<>()$`"

// SplitCommand splits a command line into words as a POSIX shell does
// for quoting alone: blanks separate words; 'single quotes' keep
// everything; "double quotes" keep everything but \" \\ \$ \` (escaped);
// a backslash outside quotes escapes the next character. Nothing is
// expanded: an unquoted |, &, ;, <, >, (, ), $ or ` is an error that says
// to run a shell (sh -c '…'), as is an unterminated quote or an empty
// command.
func SplitCommand(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("command: unterminated ' quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			n, err := doubleQuoted(s[i+1:], &cur)
			if err != nil {
				return nil, err
			}
			i += n + 1
			inWord = true
		case c == '\\':
			if i+1 < len(s) {
				i++
				if s[i] != '\n' {
					cur.WriteByte(s[i])
				}
			}
			inWord = true
		case strings.IndexByte(shellOnly, c) >= 0:
			return nil, fmt.Errorf("command: %q is shell syntax, and the command is not run by a shell: quote it, or run one (sh -c '…')", c)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, errors.New("command: empty")
	}
	return words, nil
}

// doubleQuoted copies the inside of a double-quoted string (s starts after
// the opening quote) to b and returns the index of the closing quote.
func doubleQuoted(s string, b *strings.Builder) (int, error) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return i, nil
		case '\\':
			if i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
				i++
				if s[i] != '\n' {
					b.WriteByte(s[i])
				}
				continue
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return 0, errors.New(`command: unterminated " quote`)
}

// prepare returns a copy of e ready to launch from the folder dir: Cwd
// made absolute and checked, and the program found (on PATH, or relative
// to Cwd when it has a slash).
func (e *External) prepare(dir string) (*External, error) {
	out := *e
	out.Env = cloneEnv(e.Env)
	out.Argv = slices.Clone(e.Argv)
	if len(out.Argv) == 0 {
		var err error
		if out.Argv, err = SplitCommand(e.Cmd); err != nil {
			return nil, err
		}
	}
	out.Cwd = dir
	if e.Cwd != "" {
		out.Cwd = e.Cwd
		if !filepath.IsAbs(out.Cwd) {
			out.Cwd = filepath.Join(dir, out.Cwd)
		}
	}
	if fi, err := os.Stat(out.Cwd); err != nil {
		return nil, fmt.Errorf("cwd: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("cwd %s is not a folder", out.Cwd)
	}
	prog := out.Argv[0]
	if strings.Contains(prog, "/") {
		if !filepath.IsAbs(prog) {
			prog = filepath.Join(out.Cwd, prog)
		}
		if fi, err := os.Stat(prog); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return nil, fmt.Errorf("command %s: not an executable file", out.Argv[0])
		}
	} else if _, err := exec.LookPath(prog); err != nil {
		if _, ok := out.Env["PATH"]; !ok {
			return nil, fmt.Errorf("command: %w", err)
		}
	}
	return &out, nil
}

func cloneEnv(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// config is the run_start config of an external run that the runner
// writes itself (the command never started the client).
func (e *External) config() json.RawMessage {
	b, err := json.Marshal(struct {
		Cmd      []string `json:"cmd"`
		External bool     `json:"external"`
	}{e.Argv, true})
	if err != nil {
		return nil
	}
	return b
}

// collectorEnv is what a command learns of its run's collector.
type collectorEnv struct {
	addr  string // EnvCollector
	token string // EnvCollectorToken
}

// environ returns the command's environment: base (the launcher's) without
// the variables the runner sets, then Env, then the gnnscope variables and
// PYTHONPATH with the client folder first (the user's PYTHONPATH, from Env
// or base, after it), and EnvTorchProfile when TorchProfile is set (over
// Env's and base's; without it theirs is kept, for scripts run by hand).
// With a collector (col not nil), EnvCollector and EnvCollectorToken are
// its; without one, base's are dropped (they name another run's) and
// Env's kept.
func (e *External) environ(base []string, journal, session, run, variant, pyclient string, col *collectorEnv) []string {
	ours := []string{EnvJournal, EnvSession, EnvRun, EnvVariant, EnvAuto, "PYTHONPATH", EnvCollector, EnvCollectorToken}
	if e.TorchProfile > 0 {
		ours = append(ours, EnvTorchProfile)
	}
	userPath := ""
	out := make([]string, 0, len(base)+len(e.Env)+len(ours))
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		if k == "PYTHONPATH" {
			userPath = v
		}
		if slices.Contains(ours, k) {
			continue
		}
		if _, over := e.Env[k]; over {
			continue
		}
		out = append(out, kv)
	}
	for _, k := range sortedKeys(e.Env) {
		if k == "PYTHONPATH" {
			userPath = e.Env[k]
			continue
		}
		if k == EnvTorchProfile && e.TorchProfile > 0 || (k == EnvCollector || k == EnvCollectorToken) && col != nil {
			continue
		}
		out = append(out, k+"="+e.Env[k])
	}
	auto := "1"
	if e.NoAuto {
		auto = "0"
	}
	path := pyclient
	if userPath != "" {
		path += string(os.PathListSeparator) + userPath
	}
	out = append(out, EnvJournal+"="+journal, EnvSession+"="+session, EnvRun+"="+run,
		EnvVariant+"="+variant, EnvAuto+"="+auto, "PYTHONPATH="+path)
	if e.TorchProfile > 0 {
		out = append(out, EnvTorchProfile+"="+strconv.Itoa(e.TorchProfile))
	}
	if col != nil {
		out = append(out, EnvCollector+"="+col.addr, EnvCollectorToken+"="+col.token)
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
