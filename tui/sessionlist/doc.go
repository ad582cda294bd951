// Package sessionlist is the workbench's first screen: the sessions of the
// store, newest first, with their status, dataset, model, variants and key
// figures (mean epoch time of the baseline and of the fastest other run,
// speedup, test accuracy).
//
// Running sessions update live: while one is running the list polls, once
// a second, the state of its runs (the end of each journal and the
// writer's pid) and tails their journals incrementally, so a poll costs
// what was appended since the last one. Figures of finished sessions are
// read once. From the list the user opens a session's dashboard (live or
// replay), selects sessions or single runs for a comparison, exports,
// deletes or cancels sessions (after a y/n confirmation), opens the
// new-experiment form, or launches the default experiment with one key.
package sessionlist
