// Package cmdutil holds what gnnscope's commands share: the Factory that
// hands them their streams and the session store, and small helpers for
// arguments, sessions and output files.
package cmdutil
