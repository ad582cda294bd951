// Package root builds gnnscope's command tree: the root command and the
// explicit list of its commands.
package root
