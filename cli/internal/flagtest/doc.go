// Package flagtest runs a command's flag parsing alone, in gh's manner: the
// command is built with a run function that keeps its options instead of
// running, so tests check what the flags and arguments turn into.
package flagtest
