// Package export is `gnnscope export`: sessions written for other tools
// (trace: a Chrome/Perfetto trace).
package export
