// Package replay is `gnnscope replay`: a recorded session's events printed
// with their original timing.
package replay
