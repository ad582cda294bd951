// Package run is `gnnscope run`: runs of an experiment launched in the
// background, followed, canceled and compared.
package run
