// Package launch starts experiments from the workbench: the Launcher the
// screens that launch are given (runner.Launch into the session store, or
// a test's substitute), the default experiment of the L key, and the
// command that reports a launch to the root as a common.LaunchedMsg.
//
// It is the workbench's one door to runner.Launch, so that tui/common,
// which every screen imports, stays free of runner.
package launch
