package common

import "strings"

// Lines returns the number of lines of a block ("" has none).
func Lines(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}
