// Package cachechart draws a run's feature-cache hit rate over its
// training batches (cache events, in journal order): each batch's share
// of input rows found in the device cache, on a fixed scale of 0 to
// 100 %, with a rule at the run's hit rate so far. The header gives that
// rate, the last epoch's and the bytes copied host-to-device; the x axis
// the epochs the points span and how many there are. The curve is in
// braille dots (marker cells in ASCII mode); batches that do not fit the
// width are folded to column means. Runs without cache events have no
// such chart: the dashboard shows it beside the memory chart only for
// runs that have them.
package cachechart
