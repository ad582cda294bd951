// Package iostreams is the one place where gnnscope's commands meet the
// terminal: the standard streams, whether each is a terminal, whether to
// use colors (NO_COLOR), progress output on stderr and JSON output.
package iostreams
