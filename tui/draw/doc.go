// Package draw holds the small drawing kit the dashboard's components
// share: a cell grid with braille sub-cell dots, pens (a style's escape
// sequences taken once, so painting a run of cells costs two string
// appends instead of a lipgloss render), line clipping and padding by
// display width, and the axis label formats (bytes, durations, numbers).
package draw
