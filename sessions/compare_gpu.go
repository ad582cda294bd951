package sessions

import (
	"strconv"

	"github.com/gnnscope/gnnscope/profile/gpubreak"
)

// HasGPU reports whether a compared run has a GPU breakdown.
func (c *Comparison) HasGPU() bool {
	for i := range c.Runs {
		if c.Runs[i].GPU != nil {
			return true
		}
	}
	return false
}

// gpuShare returns a part of the GPU steps' windows as a percentage.
func gpuShare(part func(t *gpubreak.Step) int64) func(*RunFigures, bool) string {
	return func(r *RunFigures, _ bool) string {
		if r.GPU == nil || r.GPU.Total.Window <= 0 {
			return ""
		}
		t := &r.GPU.Total
		return strconv.FormatFloat(100*float64(part(t))/float64(t.Window), 'f', 1, 64)
	}
}

// gpuRows are the GPU breakdown's figures: shares of the steps' GPU
// windows, the longest kernel, and the kernels shorter than their launch.
var gpuRows = []figureRow{
	{"GPU window (s)", "gpu_window_s", func(r *RunFigures, _ bool) string {
		return optCell(r.GPU != nil, fmtSec(float64(gpuTotal(r).Window)/1e9))
	}, 0},
	{"GPU idle (%)", "gpu_idle_pct", gpuShare(func(t *gpubreak.Step) int64 { return t.Idle }), 0},
	{"GPU computing (%)", "gpu_compute_pct", gpuShare(func(t *gpubreak.Step) int64 { return t.Compute }), 0},
	{"GPU copying (%)", "gpu_copy_pct", gpuShare(func(t *gpubreak.Step) int64 { return t.Copy }), 0},
	{"GPU copying while computing (%)", "gpu_copy_compute_pct", gpuShare(func(t *gpubreak.Step) int64 { return t.Overlap }), 0},
	{"top kernel", "gpu_top_kernel", func(r *RunFigures, _ bool) string {
		if r.GPU == nil || len(r.GPU.Top) == 0 {
			return ""
		}
		k := r.GPU.Top[0]
		name := k.Name
		if len(name) > 40 {
			name = name[:37] + "..."
		}
		return name + " " + fmtSec(float64(k.Total)/1e9) + " s"
	}, onlyHuman},
	{"", "gpu_top_kernel", func(r *RunFigures, _ bool) string {
		if r.GPU == nil || len(r.GPU.Top) == 0 {
			return ""
		}
		return r.GPU.Top[0].Name
	}, onlyCSV},
	{"kernels shorter than launch", "gpu_short_kernels", func(r *RunFigures, _ bool) string {
		if r.GPU == nil || r.GPU.Launched == 0 {
			return ""
		}
		return strconv.Itoa(r.GPU.Short) + " of " + strconv.Itoa(r.GPU.Launched)
	}, 0},
}

func gpuTotal(r *RunFigures) gpubreak.Step {
	if r.GPU == nil {
		return gpubreak.Step{}
	}
	return r.GPU.Total
}
