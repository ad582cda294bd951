package runstate

import "encoding/json"

// External reports whether the run is the user's command (run --cmd, a
// spec variant with cmd): its config names the command.
func (r *Run) External() bool {
	var cfg struct {
		Cmd string `json:"cmd"`
	}
	return json.Unmarshal(r.Config, &cfg) == nil && cfg.Cmd != ""
}

// NoMemText is what a memory view says of a run without mem events:
// "yet" while it runs; once it ended, that none was recorded and why.
func (r *Run) NoMemText() string {
	switch {
	case !r.Ended:
		return "no mem events yet"
	case r.External() && (r.Host == nil || r.Host.GPU == ""):
		return "no mem events recorded: a trainer on the CPU has no device allocator to read (gnnscope.mem records host figures)"
	case r.External():
		return "no mem events recorded: the trainer used no CUDA memory the client saw"
	}
	return "no mem events recorded: the run ended before any"
}

// NoMetricText is what a chart of the metrics names says of a run that
// recorded none of them: "yet" while it runs; once it ended, why not.
func (r *Run) NoMetricText(names string) string {
	switch {
	case !r.Ended:
		return "no " + names + " yet"
	case r.External():
		return "no " + names + " recorded: the trainer logged none (gnnscope.metric records them)"
	}
	return "no " + names + " recorded: the run ended before any"
}
