// Package sessions is `gnnscope sessions`: the saved sessions listed,
// shown, deleted, exported and imported.
package sessions
