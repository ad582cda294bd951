// Package plot draws the workbench's line charts on ntcharts' canvas:
// lines of many points as braille dots (ntcharts' braille grid and line
// rasterizer), or as marker characters where braille is not wanted
// (--ascii, several series without color), plus horizontal rules and
// marks. Ranges are fixed by the caller and every series is pushed once
// per drawing, and the canvas is turned into text here, a run of cells
// of one pen at a time, rather than by the canvas' View, which styles
// every cell on its own.
package plot
