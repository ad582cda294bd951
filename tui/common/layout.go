package common

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Truncate cuts s (which may hold styles) to at most w cells, ending with
// tail when it had to cut; w <= 0 gives "".
func Truncate(s string, w int, tail string) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= w {
		return s
	}
	if ansi.StringWidth(tail) >= w {
		tail = ""
	}
	return ansi.Truncate(s, w, tail)
}

// PadRight pads s with spaces to w cells (cutting it when wider).
func PadRight(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := ansi.StringWidth(s)
	if n > w {
		return ansi.Truncate(s, w, "")
	}
	return s + strings.Repeat(" ", w-n)
}

// PadLeft right-aligns s in w cells (cutting it when wider).
func PadLeft(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := ansi.StringWidth(s)
	if n > w {
		return ansi.Truncate(s, w, "")
	}
	return strings.Repeat(" ", w-n) + s
}

// Fit cuts a block of lines to at most w cells wide and h lines high, so a
// view never wraps or scrolls the terminal however small it is.
func Fit(s string, w, h int) string {
	if w <= 0 || h <= 0 {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > w {
			lines[i] = ansi.Truncate(l, w, "")
		}
	}
	return strings.Join(lines, "\n")
}

// Lines returns the number of lines of a block ("" has none).
func Lines(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}
