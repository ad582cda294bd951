package cmdutil

import "strings"

// Choices lists a flag's values as its help says them, from the typed
// list that owns them: "a, b or c", last joining the last value (" or ",
// ", or ", or ", " for a plain list), each value followed by its note in
// parentheses when notes has one.
func Choices[T ~string](values []T, last string, notes map[T]string) string {
	var b strings.Builder
	for i, v := range values {
		switch {
		case i == 0:
		case i == len(values)-1:
			b.WriteString(last)
		default:
			b.WriteString(", ")
		}
		b.WriteString(string(v))
		if n := notes[v]; n != "" {
			b.WriteString(" (" + n + ")")
		}
	}
	return b.String()
}
