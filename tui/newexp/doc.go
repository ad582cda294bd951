// Package newexp is the workbench's new-experiment form: dataset, model,
// sampler, fanouts, batch size, epochs and memory budget, the sampler
// workers and prefetch depth of the pipelined variants, and the variants
// to run — the baseline and one toggle per optimization (the built-in
// optimized schedule, pipelined sampling, overlapped evaluation, the
// memory guard, GNNAutoScale) — and the user's commands, one field each
// (NAME=COMMAND, read by runner.ParseCmd as `gnnscope run --cmd` reads
// it; a filled last field gets an empty one after it, a cleared field
// drops its run). With commands and no variant toggled, the experiment is
// the commands alone and the engine's fields are not checked. A copy of a
// --cmd session holds its commands, whose runs keep their folder,
// environment and instrumentation when edited.
//
// Every change is checked with the rules `gnnscope run` applies (dataset
// references by runner.CheckDataset, the training config by
// runner.ConfigFromKeys, each variant by runner.Resolve), and errors show
// inline next to the field they concern. Launching saves the experiment
// (session.json, plus spec.toml for `gnnscope run --spec`) and starts the
// runs in the background through the form's launch.Launcher; the root then
// opens the dashboard in the form's place (the form is Done). Open builds
// the form as the root's screen, blank or as a copy of a session's
// experiment that it loads itself.
package newexp
