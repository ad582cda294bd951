// Package train is `gnnscope train`: one model trained in the foreground.
package train
