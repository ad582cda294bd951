// Package bench is `gnnscope bench`: the engine's kernels measured on
// this machine.
package bench
