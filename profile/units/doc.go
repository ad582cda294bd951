// Package units writes and reads the byte counts and durations that
// gnnscope shows and accepts: sizes such as "512MiB", "2GiB" or "0.1G",
// always in binary units (1K = 1024 bytes, as GPU memory is counted).
package units
