// Package runner describes experiments and runs them: an Experiment (a
// dataset, a split and a base training config) is trained under one or more
// Variants (named overrides of the config), each run in its own worker
// process that writes a journal in a session folder. Builtins is the one
// catalog of built-in variants (baseline, optimized, pipelined,
// overlap-eval, mem-guard, gas, cache) that both `gnnscope run --variants`
// (SelectVariants) and the workbench's new-experiment form offer.
//
// A variant may instead run a command of the user's (External: `run --cmd`,
// a spec's cmd key): its worker supervises the command, which writes the
// same journal through the Python client in clients/python, embedded in
// the binary and extracted into the session folder at launch.
//
// Specs are TOML files (LoadSpec). Execute is the one code path that loads
// the data, makes the split and trains; workers call it with a Recorder
// writing the run's journal. Launch creates the session and starts the
// runs as detached worker processes (new process sessions, so they outlive
// the terminal): one after the other by default, through a detached
// sequencer process, or all at once. Cancel stops them; RunStates adds the
// runs that have not started yet (pending) to what sessions reports;
// Compare reads the journals into a comparison table.
//
// Files of a session folder that this package adds to the sessions layout:
//
//	launch.json     the launch: mode (sequential or parallel) and the runs in order
//	sequencer.pid   the sequencer's pid (sequential launches)
//	sequencer.log   its output
//	canceled        present once the session was canceled
//	runs/<run>.log  a worker's output (stdout and stderr), an external command's too
//	pyclient/       the Python client, first on external commands' PYTHONPATH
//
// Imports: runner uses gnn, sessions, profile and clients; nothing of gnnscope
// imports runner but the command line and the TUI.
package runner
