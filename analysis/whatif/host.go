package whatif

// hostModel is how the model shares the host's cores among what runs at
// once. Every runnable thread gets an equal share (the Go runtime's
// scheduler within the process, the kernel's among processes): with D
// threads of the run runnable, at most procs of them run at once (the Go
// runtime's processors), and those compete with ext threads of other
// processes for cores CPUs. Each thread then progresses at
//
//	speed(D) = min(1, procs/D) × min(1, cores/(min(D, procs) + ext))
//
// of its speed alone on a core. A stage's recorded duration is turned
// into work (duration × the speed it ran at) and replayed at the speed
// the scenario gives: the oversubscription factor stretches it.
//
// The demand of each stage: sampling and transfer (one worker or the
// trainer) 1 thread; the trainer's overhead 1; training and evaluation
// par threads, their kernels' parallelism. par and ext are calibrated on
// the recorded run's usage (run_end): its runnable threads on average,
// (cpu_s + wait_s) / wall_s, are 1 over the serial stages and par over
// training, evaluation and setup, which gives par (between 1 and the
// kernel threads); the share of its runnable time it ran, cpu_s / (cpu_s
// + wait_s), is the speed it got, which gives ext. Without usage, par is
// the kernel threads and ext 0.
type hostModel struct {
	cores, procs float64
	par, ext     float64
	// recorded is the average runnable threads of a run whose stages ran
	// concurrently (workers), for the speed of its trainer's gaps; 0 for
	// a serial run, whose stages ran alone.
	recorded float64
}

func newHostModel(t *Trace) hostModel {
	h := hostModel{cores: float64(max(t.Cores, 1)), procs: float64(max(t.Procs, 1)), par: float64(max(t.KernelThreads, 1))}
	u := t.Usage
	if u == nil || u.WallS <= 0 || u.CPUS <= 0 {
		return h
	}
	runnable := (u.CPUS + max(u.WaitS, 0)) / u.WallS
	if t.Workers == 0 {
		var parNs int64 = t.SetupNs
		for _, b := range t.Batches {
			parNs += b.Train
		}
		for _, e := range t.Epochs {
			parNs += e.Eval
		}
		if par := float64(parNs) / 1e9; par > 0 && par < u.WallS {
			p := (runnable*u.WallS - (u.WallS - par)) / par
			h.par = min(max(p, 1), h.par)
		}
	} else {
		h.recorded = runnable
	}
	if u.WaitS > 0 {
		got := u.CPUS / (u.CPUS + u.WaitS)
		h.ext = max(0, h.cores*min(1, h.procs/runnable)/got-min(runnable, h.procs))
	}
	return h
}

// speed is the speed of each of d runnable threads (see hostModel).
func (h hostModel) speed(d float64) float64 {
	if d <= 0 {
		return 1
	}
	return min(1, h.procs/d) * min(1, h.cores/(min(d, h.procs)+h.ext))
}
