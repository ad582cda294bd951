package runstate

import (
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/profile/gpubreak"
)

// GPUTop is how many kernels GPUWork's breakdown names.
const GPUTop = 5

// GPUWork is the GPU's own breakdown of a run (profile/gpubreak), folded
// as spans come and worked out when a view asks, at most once per span
// added.
type GPUWork struct {
	b     *gpubreak.Builder
	spans int
	at    int
	last  *gpubreak.Breakdown
}

func (g *GPUWork) add(e *profile.Event) {
	if g.b == nil {
		g.b = gpubreak.NewBuilder()
	}
	g.b.Add(e)
	g.spans++
}

// Breakdown returns the breakdown so far (nil without device-side spans).
func (g *GPUWork) Breakdown() *gpubreak.Breakdown {
	if g.b == nil {
		return nil
	}
	if g.at != g.spans || g.last == nil {
		g.last, g.at = g.b.Result(GPUTop), g.spans
	}
	return g.last
}
