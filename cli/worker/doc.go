// Package worker is the hidden `gnnscope worker` that `gnnscope run`
// starts in the background.
package worker
