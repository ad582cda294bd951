// Package compare is `gnnscope compare`: runs of one or several sessions
// side by side.
package compare
