package synth

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"
)

// TestMeasure generates the preset named in $SYNTH_MEASURE and prints its
// size, time, memory and (with SYNTH_PROXY set) learnability figures.
// Skipped when the variable is unset. Example:
//
//	SYNTH_MEASURE=synth-products go test -run TestMeasure -v
func TestMeasure(t *testing.T) {
	name := os.Getenv("SYNTH_MEASURE")
	if name == "" {
		t.Skip("set SYNTH_MEASURE to a preset name")
	}
	p, ok := Lookup(name)
	if !ok {
		t.Fatalf("no preset %q", name)
	}
	var last string
	start := time.Now()
	stageStart := start
	ds, err := Generate(p.Config, 1, func(stage string, frac float64) {
		if stage != last {
			if last != "" {
				fmt.Printf("  %-9s %v\n", last, time.Since(stageStart).Round(time.Millisecond))
			}
			last, stageStart = stage, time.Now()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("  %-9s %v\n", last, time.Since(stageStart).Round(time.Millisecond))
	elapsed := time.Since(start)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	st := degrees(ds)
	fmt.Printf("%s: generated in %v (GOMAXPROCS %d); memory obtained from the OS by the Go runtime %.2f GiB\n", name, elapsed.Round(time.Millisecond), runtime.GOMAXPROCS(0), float64(ms.Sys)/(1<<30))
	fmt.Printf("nodes %d, stored edges %d (target %.0f, %.2f%%), mean degree %.2f, median %d, max %d, isolated %d\n",
		ds.Graph.N, ds.Graph.NumEdges(), p.Config.AvgDegree*float64(p.Config.Nodes),
		100*float64(ds.Graph.NumEdges())/(p.Config.AvgDegree*float64(p.Config.Nodes)), st.mean, st.median, st.max, st.isolated)
	fmt.Printf("edge homophily %.3f (configured %.2f)\n", edgeHomophily(ds), p.Config.Homophily)
	sizes := make([]int, ds.NumClasses)
	for _, y := range ds.Y {
		sizes[y]++
	}
	fmt.Printf("class sizes %v\n", sizes)
	if os.Getenv("SYNTH_PROXY") != "" {
		fo, fg := proxyAccuracy(ds, 20000)
		fmt.Printf("proxy accuracy (LDA): features only %.3f, features+neighbor mean %.3f\n", fo, fg)
	}
}
