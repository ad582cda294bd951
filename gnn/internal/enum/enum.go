package enum

import "strings"

// Join joins values with sep, as strings.Join does for strings.
func Join[T ~string](values []T, sep string) string {
	s := make([]string, len(values))
	for i, v := range values {
		s[i] = string(v)
	}
	return strings.Join(s, sep)
}

// Or lists values as a sentence does: "a", "a or b", "a, b or c".
func Or[T ~string](values []T) string {
	if len(values) < 2 {
		return Join(values, "")
	}
	return Join(values[:len(values)-1], ", ") + " or " + string(values[len(values)-1])
}
