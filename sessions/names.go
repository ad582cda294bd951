package sessions

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxNameLen is the longest name ValidName accepts, in bytes. With a
// repeat suffix (.r<K>), a rank suffix (.rank<R>) and an extension, the
// file names made from a name stay far below the 255 bytes that file
// systems allow.
const MaxNameLen = 128

// nameAlphabet says what a name may hold, for errors.
const nameAlphabet = "a name holds letters, digits, '.', '_' and '-' (not first)"

// ErrInvalidName is wrapped by the errors of names that are not safe file
// names (see ValidName).
var ErrInvalidName = errors.New("invalid name")

// NameError is the error of a name that ValidName refuses. It wraps
// ErrInvalidName.
type NameError struct {
	// Kind says what the name names ("run", "variant", "session id",
	// "file"); empty when not known.
	Kind string
	// Name is the name as given.
	Name string
	// Reason says what is wrong with it.
	Reason string
}

// Error quotes the name and says what is wrong with it, e.g.
// `run name "../x": holds a path separator '/'`.
func (e *NameError) Error() string {
	kind := "invalid"
	if e.Kind != "" {
		kind = e.Kind
	}
	return fmt.Sprintf("%s name %q: %s", kind, e.Name, e.Reason)
}

// Unwrap returns ErrInvalidName.
func (e *NameError) Unwrap() error { return ErrInvalidName }

// ValidName checks a name that becomes a file or folder name (a session
// id, a run or variant name, a file of an archive) before anything joins
// it to a path: it must be one safe path element of 1 to MaxNameLen bytes
// out of A-Z a-z 0-9 '.' '_' '-', not starting with '.' or '-'. So "."
// and "..", hidden files, option-like names, path separators, spaces,
// NUL and control characters and non-ASCII letters are all refused. Every
// name read from a session's files, an archive or a command line passes
// it. The error is a *NameError.
func ValidName(name string) error {
	if r := nameProblem(name); r != "" {
		return &NameError{Name: name, Reason: r}
	}
	return nil
}

// CheckName is ValidName with an error that says what the name names:
// kind is "run", "variant", "session id", "file" and the like.
func CheckName(kind, name string) error {
	if r := nameProblem(name); r != "" {
		return &NameError{Kind: kind, Name: name, Reason: r}
	}
	return nil
}

// nameProblem returns what is wrong with name, "" if nothing is.
func nameProblem(name string) string {
	switch {
	case name == "":
		return "empty"
	case len(name) > MaxNameLen:
		return fmt.Sprintf("%d bytes, over the limit of %d", len(name), MaxNameLen)
	case name == "." || name == "..":
		return "a reference to a folder, not a name"
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if nameByte(c) {
			continue
		}
		switch r, size := utf8.DecodeRuneInString(name[i:]); {
		case c == '/' || c == '\\':
			return fmt.Sprintf("holds a path separator %q", rune(c))
		case c < 0x20 || c == 0x7f:
			return fmt.Sprintf("holds the control character %q", rune(c))
		case r == utf8.RuneError && size <= 1:
			return fmt.Sprintf("holds the byte 0x%02x (not UTF-8)", c)
		default:
			return fmt.Sprintf("holds %q; %s", r, nameAlphabet)
		}
	}
	switch name[0] {
	case '.':
		return "starts with '.' (a hidden file); " + nameAlphabet
	case '-':
		return "starts with '-' (an option); " + nameAlphabet
	}
	return ""
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

// SafeName turns any string into a name that passes ValidName: other
// characters become '-', and it is cut to MaxNameLen bytes ("run" if
// empty).
func SafeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !nameByte(c) {
			b[i] = '-'
		}
	}
	out := strings.TrimLeft(string(b), ".-")
	if len(out) > MaxNameLen {
		out = out[:MaxNameLen]
	}
	if out == "" {
		return "run"
	}
	return out
}
