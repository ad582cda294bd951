package ui

import (
	"strings"
)

// utf8Locale reports whether the locale of the environment getenv reads
// encodes characters as UTF-8: the first of LC_ALL, LC_CTYPE and LANG
// that is set names a UTF-8 codeset ("en_US.UTF-8", "C.utf8"). With none
// set the locale is C (POSIX), which is not; nor are "C", "POSIX" or a
// Latin-1 locale ("de_DE.ISO-8859-1", "fr_FR"). A terminal set up for
// such a locale shows braille and box drawing as garbage, so the
// workbench draws with 7-bit characters there (as --ascii).
func utf8Locale(getenv func(string) string) bool {
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := getenv(k); v != "" {
			v = strings.ToLower(v)
			return strings.Contains(v, "utf-8") || strings.Contains(v, "utf8")
		}
	}
	return false
}

// dumbTerminal reports whether TERM names a terminal that cannot draw
// the workbench: "dumb" (Emacs' shell, some CI logs) moves no cursor and
// clears no screen, so full-screen escape codes come out as noise.
func dumbTerminal(getenv func(string) string) bool {
	return getenv("TERM") == "dumb"
}
