//go:build unix

package train

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
)

// TestTruncatedCacheEndsRunWithError: a .gsd truncated under a running
// training used to kill the process with SIGBUS at the next read of the
// mapping. Now the run ends with an error naming the file, whichever
// goroutine read first: the training loop, a kernel's parallel workers,
// the sampler workers of the pipeline or an overlapped evaluation.
func TestTruncatedCacheEndsRunWithError(t *testing.T) {
	ds := plantedPartition(t, 3000, 4, 3) // about 200 KB: many pages
	split, err := data.PerClassSplit(ds.Y, ds.NumClasses, 20, 300, 600, 0)
	if err != nil {
		t.Fatal(err)
	}
	full := Defaults("gcn")
	sampled := Defaults("sage")
	sampled.Sampler, sampled.Fanouts, sampled.BatchSize = "neighbor", []int{5, 5}, 64
	sampled.SamplerWorkers, sampled.Prefetch, sampled.OverlapEval = 2, 4, true
	for name, cfg := range map[string]Config{"full-batch": full, "pipelined": sampled} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "planted.gsd")
			if err := data.Save(path, ds); err != nil {
				t.Fatal(err)
			}
			mapped, err := data.Map(path)
			if err != nil {
				t.Fatal(err)
			}
			defer data.Release(mapped)
			cfg.Epochs, cfg.Hidden, cfg.Features = 50, 16, "none"
			onEpoch := func(st EpochStat) {
				if st.Epoch == 2 {
					if err := os.Truncate(path, 0); err != nil {
						t.Error(err)
					}
				}
			}
			_, err = Run(context.Background(), cfg, mapped, split, cpu.New(2, 0), Options{OnEpoch: onEpoch})
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "truncated") {
				t.Fatalf("run on a truncated mapping: %v", err)
			}
			t.Log(err)
		})
	}
}
