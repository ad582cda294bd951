package backend

import (
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/profile"
)

func TestOpenCPU(t *testing.T) {
	for _, name := range []string{"", "cpu", "CPU"} {
		dev, closeDev, err := Open(name, Options{Threads: 1, Budget: 1 << 20})
		if err != nil {
			t.Fatalf("Open(%q): %v", name, err)
		}
		if dev.Name() != "cpu" || dev.Mem().Stats().Budget != 1<<20 {
			t.Fatalf("Open(%q) = %s, budget %d", name, dev.Name(), dev.Mem().Stats().Budget)
		}
		if err := closeDev(); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := Open("tpu", Options{}); err == nil || !strings.Contains(err.Error(), "cpu, cuda, cuda:N") {
		t.Fatalf("Open(tpu): %v", err)
	}
}

// TestOpenCUDAWithoutTag checks the message a binary built without the
// cuda tag gives for --device cuda: what is wrong and how to build one.
func TestOpenCUDAWithoutTag(t *testing.T) {
	if CUDABuilt {
		t.Skip("built with the cuda tag")
	}
	_, _, err := Open("cuda:1", Options{})
	if !errors.Is(err, ErrNoCUDA) {
		t.Fatalf("Open(cuda:1): %v", err)
	}
	for _, want := range []string{"cuda:1", "built without CUDA support", "go build -tags cuda"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// TestDefaultBuildHasNoCUDA guards the rule that the default build never
// imports the CUDA backend or its driver loader (cgo), nor gorgonia.org/cu,
// whose package init exits the process on a machine without a GPU.
func TestDefaultBuildHasNoCUDA(t *testing.T) {
	if CUDABuilt {
		t.Skip("built with the cuda tag")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}}", "github.com/gnnscope/gnnscope").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed only %v", deps)
	}
	for _, d := range deps {
		if d == "gorgonia.org/cu" || strings.HasPrefix(d, "gorgonia.org/cu/") || strings.HasPrefix(d, "github.com/gnnscope/gnnscope/gnn/device/cuda/cudrv") {
			t.Fatalf("the default build depends on %s", d)
		}
	}
}

func TestDescribeCPU(t *testing.T) {
	h := profile.Host{CPU: "x"}
	Describe(cpu.New(1, 0), &h)
	if h != (profile.Host{CPU: "x"}) {
		t.Fatalf("a CPU device changed the host: %+v", h)
	}
}

// fakeGPU is a device that says it is a CUDA GPU and reads its memory.
type fakeGPU struct {
	*cpu.Device
	mu    sync.Mutex
	reads int
}

func (f *fakeGPU) Info() device.Info {
	return device.Info{Backend: "cuda", Name: "Fake GPU", Memory: 1 << 30, Driver: "CUDA 12.4", UUID: "GPU-00000000-0000-0000-0000-000000000000"}
}

func (f *fakeGPU) MemInfo() (free, total int64, err error) {
	f.mu.Lock()
	f.reads++
	f.mu.Unlock()
	return 1 << 28, 1 << 30, nil
}

type memSink struct {
	mu  sync.Mutex
	evs []profile.Event
}

func (s *memSink) WriteEvents(evs []profile.Event) error {
	s.mu.Lock()
	s.evs = append(s.evs, evs...)
	s.mu.Unlock()
	return nil
}

func (s *memSink) Flush() error { return nil }

// TestSampleGPU samples a fake GPU through a scoped view: NVML does not
// know it, so the readings come from its MemInfo, with util -1.
func TestSampleGPU(t *testing.T) {
	g := &fakeGPU{Device: cpu.New(1, 0)}
	h := profile.Host{}
	Describe(device.Scoped(g, device.NewScope()), &h)
	if h.GPU != "Fake GPU" || h.GPUMem != 1<<30 || h.Driver == "" {
		t.Fatalf("host %+v", h)
	}
	sink := &memSink{}
	rec := profile.NewRecorder(sink, profile.RecorderOptions{})
	s := SampleGPU(device.Scoped(g, device.NewScope()), rec, time.Millisecond)
	if s.Source != "cuMemGetInfo" {
		t.Fatalf("source %q (%v)", s.Source, s.Err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		g.mu.Lock()
		n := g.reads
		g.mu.Unlock()
		if n >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if used, proc := s.Stop(); used != 0 || proc != 0 {
		t.Fatalf("peak without NVML: %d %d", used, proc)
	}
	rec.Close(profile.StatusOK, nil, nil)
	var gpu int
	for _, e := range sink.evs {
		if e.T == profile.TypeGPU {
			gpu++
			if e.Used != 3<<28 || e.Total != 1<<30 || e.Util != -1 {
				t.Fatalf("gpu event %+v", e)
			}
		}
	}
	if gpu < 3 {
		t.Fatalf("%d gpu events", gpu)
	}
	if s := SampleGPU(cpu.New(1, 0), rec, 0); s.Source != "" || s.String() != "no GPU sampling" {
		t.Fatalf("CPU sampler %q", s)
	}
}
