// Package partition is `gnnscope partition`: a dataset's graph split into
// balanced parts with few cut edges.
package partition
