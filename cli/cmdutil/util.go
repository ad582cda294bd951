package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/sessions"
)

// Context returns the command's context, or the background one when the
// command runs without one.
func Context(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// ExactArgs is cobra.ExactArgs with a message that names the arguments:
// "gnnscope datasets stats expects REF (...) (see --help)".
func ExactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return fmt.Errorf("%s expects %s (see --help)", cmd.CommandPath(), what)
		}
		return nil
	}
}

// MinimumArgs is cobra.MinimumNArgs with a message that names the
// arguments: "gnnscope sessions rm expects ID ... (see --help)".
func MinimumArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return fmt.Errorf("%s expects %s (see --help)", cmd.CommandPath(), what)
		}
		return nil
	}
}

// MaximumArgs is cobra.MaximumNArgs with a message that names the
// arguments.
func MaximumArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return fmt.Errorf("%s takes at most %s, got %d arguments (see --help)", cmd.CommandPath(), what, len(args))
		}
		return nil
	}
}

// FlagError rewrites a flag parsing error of pflag, whose text for a bad
// value carries Go's strconv message ("invalid argument "abc" for
// "--epochs" flag: strconv.ParseInt: parsing "abc": invalid syntax"),
// as one that says what the flag wants: "--epochs: "abc" is not a whole
// number (see --help)". Other errors gain the pointer to --help.
func FlagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	var value, flag string
	if _, err := fmt.Sscanf(msg, "invalid argument %q for %q flag:", &value, &flag); err == nil {
		want := "a valid value"
		switch {
		case strings.Contains(msg, "strconv.ParseInt"), strings.Contains(msg, "strconv.ParseUint"), strings.Contains(msg, "strconv.Atoi"):
			want = "a whole number"
		case strings.Contains(msg, "strconv.ParseFloat"):
			want = "a number"
		case strings.Contains(msg, "strconv.ParseBool"):
			want = "true or false"
		case strings.Contains(msg, "strconv.ParseDuration"), strings.Contains(msg, "time: "):
			want = "a duration such as 30s"
		default:
			_, rest, _ := strings.Cut(msg, " flag: ")
			return fmt.Errorf("%s: %q: %s (see %s --help)", flag, value, rest, cmd.CommandPath())
		}
		return fmt.Errorf("%s: %q is not %s (see %s --help)", flag, value, want, cmd.CommandPath())
	}
	return fmt.Errorf("%s (see %s --help)", msg, cmd.CommandPath())
}

// ParseInts parses a comma-separated list of integers such as "25,10";
// empty items are skipped, and an empty list is an error.
func ParseInts(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		v, err := strconv.Atoi(p)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", p)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, errors.New("empty list")
	}
	return out, nil
}

// JoinInts writes v as a comma-separated list ("25,10"), as ParseInts
// reads it.
func JoinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// ResolveSession returns the id of the session ref names: an id, a unique
// prefix of one, or "last"/"latest" for the newest.
func ResolveSession(store *sessions.Store, ref string) (string, error) {
	if ref == "" {
		return "", errors.New("no session given (gnnscope sessions lists them)")
	}
	s, err := store.MatchSession(ref)
	if err != nil {
		return "", err
	}
	return s.ID(), nil
}

// GetSession opens the session ref names (see ResolveSession).
func GetSession(store *sessions.Store, ref string) (*sessions.Session, error) {
	id, err := ResolveSession(store, ref)
	if err != nil {
		return nil, err
	}
	return store.Get(id)
}

// WriteOutput runs write on stdout when path is "" or "-", else on a
// temporary file renamed to path once complete (so a failed write leaves
// no half file). An existing file is refused unless force is set, and
// anything but a regular file even then (see WriteFile); missing folders
// are created.
func WriteOutput(stdout io.Writer, path string, force bool, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		return write(stdout)
	}
	return WriteFile(path, force, 0o666, write)
}

// CheckOutput readies the output file path (-o) of a command before it
// does its work: "" and "-" (stdout) pass; an existing file is refused
// unless force is set, with an error that names --force; the folders
// above it that are missing are created.
func CheckOutput(path string, force bool) error {
	if path == "" || path == "-" {
		return nil
	}
	err := sessions.PrepareOutput(path, force)
	if errors.Is(err, sessions.ErrOutputExists) {
		return fmt.Errorf("%s exists: --force overwrites it", path)
	}
	return err
}

// Dash returns s, or "-" when s is empty (a table cell with nothing in it).
func Dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// OneLine puts a message on one line of at most 120 bytes.
func OneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}
