package iostreams

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
)

// IOStreams are the input and outputs of a command and what is known about
// them. Commands write results to Out and everything else (progress, notes,
// prompts) to ErrOut.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	stdinTTY, stdoutTTY, stderrTTY bool
	noColor                        bool
}

// System returns the process's standard streams, with terminal detection
// on each and colors off when NO_COLOR is set (to anything).
func System() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		stdinTTY:  IsTerminal(os.Stdin),
		stdoutTTY: IsTerminal(os.Stdout),
		stderrTTY: IsTerminal(os.Stderr),
		noColor:   os.Getenv("NO_COLOR") != "",
	}
}

// Test returns streams over buffers, none of them a terminal, and the
// buffers: stdin (to fill), stdout and stderr (to read).
func Test() (ios *IOStreams, in, out, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

// IsStdinTTY reports whether In is a terminal.
func (s *IOStreams) IsStdinTTY() bool { return s.stdinTTY }

// IsStdoutTTY reports whether Out is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// IsStderrTTY reports whether ErrOut is a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.stderrTTY }

// SetStdinTTY says whether In is to be taken for a terminal (tests).
func (s *IOStreams) SetStdinTTY(tty bool) { s.stdinTTY = tty }

// SetStdoutTTY says whether Out is to be taken for a terminal (tests).
func (s *IOStreams) SetStdoutTTY(tty bool) { s.stdoutTTY = tty }

// SetStderrTTY says whether ErrOut is to be taken for a terminal (tests).
func (s *IOStreams) SetStderrTTY(tty bool) { s.stderrTTY = tty }

// ColorEnabled reports whether output may be colored: Out is a terminal
// and NO_COLOR is not set.
func (s *IOStreams) ColorEnabled() bool { return s.stdoutTTY && !s.noColor }

// SetNoColor turns colors off (--no-color) or back on where the terminal
// allows them.
func (s *IOStreams) SetNoColor(off bool) { s.noColor = off }

// NoColor reports whether colors were turned off, by NO_COLOR or
// SetNoColor, whatever the terminal.
func (s *IOStreams) NoColor() bool { return s.noColor }

// WriteJSON writes v to Out as indented JSON (see WriteJSON).
func (s *IOStreams) WriteJSON(v any) error { return WriteJSON(s.Out, v) }

// WriteJSON writes v to w as JSON indented by two spaces, followed by a
// newline: the form of every command's --json output.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
