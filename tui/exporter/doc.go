// Package exporter writes what the workbench shows to files — comparison
// tables (Markdown, CSV, LaTeX), a Chrome/Perfetto trace of the runs and a
// session archive — and is the dialog the sessions list and the compare
// screen open to choose which files and where (by default the session's
// folder; the archive goes to the working directory, as
// `gnnscope sessions export` would write it). It reports every path it
// wrote.
package exporter
