package iostreams

import (
	"fmt"
	"io"
	"time"
)

// Progress shows how a long command goes, on stderr: on a terminal one
// status line rewritten in place, elsewhere occasional whole lines. Quiet
// (-q) shows nothing but warnings.
type Progress struct {
	w     io.Writer
	quiet bool
	tty   bool
	last  time.Time // when Line last printed off a terminal
	open  bool      // a line is being rewritten in place
	stage string    // Stage's current stage
	shown int       // Stage's last percentage shown
}

// NewProgress returns the progress output of a command on ErrOut.
func (s *IOStreams) NewProgress(quiet bool) *Progress {
	return &Progress{w: s.ErrOut, quiet: quiet, tty: s.stderrTTY, shown: -1}
}

// Printf prints a line of its own (after ending a status line).
func (p *Progress) Printf(format string, a ...any) {
	if p.quiet {
		return
	}
	p.Done()
	fmt.Fprintf(p.w, format, a...)
}

// Line shows a status line: rewritten in place on a terminal, otherwise
// printed at most every two seconds, and always when final.
func (p *Progress) Line(final bool, format string, a ...any) {
	if p.quiet {
		return
	}
	s := fmt.Sprintf(format, a...)
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", s)
		p.open = true
		return
	}
	if final || time.Since(p.last) >= 2*time.Second {
		fmt.Fprintln(p.w, s)
		p.last = time.Now()
	}
}

// Stage shows the progress of a named stage (loading, generating,
// partitioning ...) with frac in [0, 1]: its percentage in place on a
// terminal, otherwise one line when the stage completes. It has the
// signature of the engine's progress callbacks.
func (p *Progress) Stage(stage string, frac float64) {
	if p.quiet {
		return
	}
	pct := int(100*frac + 0.5)
	if stage == p.stage && pct == p.shown {
		return
	}
	if stage != p.stage {
		p.Done()
		p.stage, p.shown = stage, -1
	}
	p.shown = pct
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%-16s %3d%%", stage, pct)
		p.open = true
	} else if frac >= 1 {
		fmt.Fprintf(p.w, "%-16s done\n", stage)
	}
}

// Warn prints a warning on a line of its own, even when quiet.
func (p *Progress) Warn(msg string) {
	p.Done()
	fmt.Fprintln(p.w, "warning:", msg)
}

// Done ends the status line being rewritten, if any.
func (p *Progress) Done() {
	if p.open {
		fmt.Fprintln(p.w)
		p.open = false
	}
}
