package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/train"
)

const gib = int64(1) << 30

// productsLike is synth-products' shape (ogbn-products): 2.45M nodes,
// 124M directed edges, 100 features, 47 classes.
var productsLike = Workload{Nodes: 2_449_029, Edges: 123_718_280, Features: 100, Classes: 47}

// hugeLike is a graph past a 24 GiB device: 200M nodes, 3G edges, 128
// features (102 GB of features, a 13.6 GB CSR).
var hugeLike = Workload{Nodes: 200_000_000, Edges: 3_000_000_000, Features: 128, Classes: 172}

func sageProducts(dev string) train.Config {
	c := train.Defaults("sage")
	c.Layers, c.Hidden, c.Fanouts, c.BatchSize, c.Device = 3, 256, []int{15, 10, 5}, 1024, dev
	return c
}

func allFree() Free {
	return Free{Workers: true, Prefetch: true, SamplerDevice: true, FeatureStore: true}
}

func TestPlanWorkersOnDescribedMachines(t *testing.T) {
	for _, c := range []struct {
		name    string
		m       Machine
		dev     string
		threads int
		want    int
	}{
		{"2 cores, cpu", Machine{CPUs: 2}, "", 0, 1},
		{"16 cores, cpu", Machine{CPUs: 16}, "", 0, 8},
		{"64 cores, cpu", Machine{CPUs: 64}, "", 0, 32},
		{"16 cores, cpu, --threads 4", Machine{CPUs: 16}, "", 4, 12},
		{"2 cores, cuda", Machine{CPUs: 2, GPU: true}, "cuda", 0, 1},
		{"16 cores, cuda", Machine{CPUs: 16, GPU: true}, "cuda", 0, 15},
		{"64 cores, cuda: capped", Machine{CPUs: 64, GPU: true}, "cuda", 0, maxSizedWorkers},
		{"64 CPUs, quota 4.5 cores, cuda", Machine{CPUs: 64, Quota: 4.5, GPU: true}, "cuda", 0, 3},
		{"16 CPUs, quota 0.5 core", Machine{CPUs: 16, Quota: 0.5}, "", 0, 1},
	} {
		cfg := sageProducts(c.dev)
		cfg.Threads = c.threads
		got, why := PlanWorkers(c.m, cfg)
		if got != c.want || !strings.Contains(why, "cores usable") {
			t.Errorf("%s: %d workers (%s), want %d", c.name, got, why, c.want)
		}
	}
}

func TestPlanCoresPicksTheGPUSampler(t *testing.T) {
	m := Machine{CPUs: 16, GPU: true}
	cfg, notes := PlanCores(m, sageProducts("cuda"), allFree())
	if cfg.SamplerDevice != device.KindCUDA || cfg.SamplerWorkers != gpuSampledWorkers || len(notes) != 2 {
		t.Errorf("cuda: sampler %q, %d workers, notes %q", cfg.SamplerDevice, cfg.SamplerWorkers, notes)
	}
	cfg, notes = PlanCores(m, sageProducts(""), allFree())
	if cfg.SamplerDevice != "" || cfg.SamplerWorkers != 8 || len(notes) != 1 {
		t.Errorf("cpu: sampler %q, %d workers, notes %q", cfg.SamplerDevice, cfg.SamplerWorkers, notes)
	}
	set := sageProducts("cuda")
	set.SamplerWorkers = 3
	cfg, notes = PlanCores(m, set, Free{})
	if cfg.SamplerWorkers != 3 || cfg.SamplerDevice != "" || notes != nil {
		t.Errorf("nothing free: %+v %q", cfg, notes)
	}
}

func TestPlanMemoryOnDescribedDevices(t *testing.T) {
	for _, c := range []struct {
		name       string
		devFree    int64
		w          Workload
		store      device.Place
		graphWhere string
	}{
		{"products on 24 GiB", 24 * gib, productsLike, device.PlaceDevice, "in device memory"},
		{"products on 80 GiB", 80 * gib, productsLike, device.PlaceDevice, "in device memory"},
		{"products on 1 GiB", 1 * gib, productsLike, device.PlaceUVA, "in device memory"},
		{"huge on 24 GiB", 24 * gib, hugeLike, device.PlaceUVA, "mapped pinned host memory"},
		{"huge on 80 GiB", 80 * gib, hugeLike, device.PlaceUVA, "in device memory"},
	} {
		m := Machine{CPUs: 16, GPU: true, DeviceFree: c.devFree, HostFree: 200 * gib}
		cfg, _ := PlanCores(m, sageProducts("cuda"), allFree())
		cfg.CacheBytes = "20%"
		cfg, notes := PlanMemory(m, c.w, cfg, allFree())
		all := strings.Join(notes, "\n")
		if cfg.FeatureStore != c.store || !strings.Contains(all, c.graphWhere) || cfg.Prefetch < 1 || cfg.Prefetch > 2*cfg.SamplerWorkers {
			t.Errorf("%s: store %s, prefetch %d:\n%s", c.name, cfg.FeatureStore, cfg.Prefetch, all)
		}
		if c.store == device.PlaceUVA && !strings.Contains(all, "feature cache (20%)") {
			t.Errorf("%s: uva without the cache named:\n%s", c.name, all)
		}
	}
}

func TestPlanMemoryPrefetchFromHostMemory(t *testing.T) {
	cfg := sageProducts("")
	cfg.SamplerWorkers = 8
	s := EstimateSizes(productsLike, cfg)
	for _, c := range []struct {
		host int64
		want int
	}{{0, 16}, {200 * gib, 16}, {4 * 3 * s.BatchIn, 3}, {1, 1}} {
		got, notes := PlanMemory(Machine{CPUs: 16, HostFree: c.host}, productsLike, cfg, Free{Prefetch: true})
		if got.Prefetch != c.want || len(notes) != 1 || got.FeatureStore != "" {
			t.Errorf("host %d: prefetch %d, notes %q; want %d", c.host, got.Prefetch, notes, c.want)
		}
	}
	set := cfg
	set.Prefetch = 5
	if got, notes := PlanMemory(Machine{CPUs: 16}, productsLike, set, Free{}); got.Prefetch != 5 || notes != nil {
		t.Errorf("prefetch set: %d %q", got.Prefetch, notes)
	}
}

func TestFreeSettingsOnlyForOptimized(t *testing.T) {
	cfg := sageProducts("cuda")
	if f := freeSettings(Variant{Name: "optimized"}, cfg); f != allFree() {
		t.Errorf("optimized, nothing set: %+v", f)
	}
	if f := freeSettings(Variant{Name: "optimized", Overrides: map[string]any{"sampler_workers": 2, "feature_store": "uva"}}, cfg); f.Workers || f.FeatureStore || !f.Prefetch {
		t.Errorf("optimized with keys: %+v", f)
	}
	set := cfg
	set.SamplerWorkers, set.SamplerDevice = 4, device.KindCPU
	if f := freeSettings(Variant{Name: "optimized"}, set); f.Workers || f.SamplerDevice {
		t.Errorf("experiment sets workers and sampler: %+v", f)
	}
	if f := freeSettings(Variant{Name: "pipelined"}, cfg); f != (Free{}) {
		t.Errorf("pipelined: %+v", f)
	}
}

func TestCgroupQuota(t *testing.T) {
	root := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v2 := []byte("0::/job/a\n")
	if q := cgroupQuota(root, v2); q != 0 {
		t.Errorf("no files: %v", q)
	}
	write("cpu.max", "max 100000\n")
	if q := cgroupQuota(root, v2); q != 0 {
		t.Errorf("v2 max: %v", q)
	}
	write("job/a/cpu.max", "250000 100000\n")
	if q := cgroupQuota(root, v2); q != 2.5 {
		t.Errorf("v2 own group: %v", q)
	}
	v1 := []byte("4:memory:/x\n3:cpu,cpuacct:/job/b\n")
	write("cpu,cpuacct/job/b/cpu.cfs_quota_us", "150000\n")
	write("cpu,cpuacct/job/b/cpu.cfs_period_us", "100000\n")
	if q := cgroupQuota(root, v1); q != 1.5 {
		t.Errorf("v1: %v", q)
	}
	write("cpu,cpuacct/job/b/cpu.cfs_quota_us", "-1\n")
	if q := cgroupQuota(root, v1); q != 0 {
		t.Errorf("v1 unlimited: %v", q)
	}
	if c := (Machine{CPUs: 8, Quota: 1.5}).Cores(); c != 1 {
		t.Errorf("cores under a 1.5 quota: %d", c)
	}
}
