// Package compare is the workbench's comparison screen: the selected runs
// of one or several sessions side by side (sessions.Compare, with run
// states as runner reports them), the configuration keys that differ
// first, then epoch times, stage totals, overlap, efficiency, memory,
// staleness, accuracy and speedup against the baseline. The table scrolls
// both ways; x exports it to Markdown, CSV and LaTeX and the runs to a
// Chrome trace, in the session's folder or a chosen one. While a compared
// run is still running the table recomputes every few seconds.
package compare
