// Package ui is `gnnscope ui`: the terminal workbench.
package ui
