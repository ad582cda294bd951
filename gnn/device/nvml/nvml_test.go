package nvml

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestOpenHere opens NVML on this machine: either it works (a GPU box) or
// the error says NVML is not available; it never panics or exits.
func TestOpenHere(t *testing.T) {
	l, err := Open()
	if err != nil {
		if !errors.Is(err, ErrNotAvailable) {
			t.Fatalf("Open: %v does not wrap ErrNotAvailable", err)
		}
		t.Logf("NVML: %v", err)
		return
	}
	defer l.Close()
	n, err := l.Count()
	if err != nil {
		t.Fatal(err)
	}
	v, _ := l.DriverVersion()
	t.Logf("NVML: %d GPUs, driver %s", n, v)
	if n > 0 {
		d, err := l.DeviceByIndex(0)
		if err != nil {
			t.Fatal(err)
		}
		s, err := d.Sample()
		if err != nil {
			t.Fatal(err)
		}
		if s.Total <= 0 || s.Used < 0 || s.Used > s.Total || s.Util < 0 || s.Util > 1 {
			t.Fatalf("implausible sample %+v", s)
		}
	}
}

func TestOpenMissingLibrary(t *testing.T) {
	l, err := openPath("/nonexistent/libnvidia-ml.so.1")
	if err == nil {
		l.Close()
		t.Skip("a library was found at a nonexistent path")
	}
	if !errors.Is(err, ErrNotAvailable) {
		t.Fatalf("missing library: %v does not wrap ErrNotAvailable", err)
	}
}

// fakeGPU returns scripted samples.
type fakeGPU struct {
	mu   sync.Mutex
	i    int
	seq  []Sample
	errs map[int]error
}

func (f *fakeGPU) sample(pid int) (Sample, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := f.i
	f.i++
	if err := f.errs[i]; err != nil {
		return Sample{}, err
	}
	return f.seq[i%len(f.seq)], nil
}

func TestRunAndPeak(t *testing.T) {
	g := &fakeGPU{seq: []Sample{
		{Used: 10, Total: 100, Util: 0.1, Process: 4},
		{Used: 70, Total: 100, Util: 0.9, Process: 60},
		{Used: 30, Total: 100, Util: 0.5, Process: -1},
	}, errs: map[int]error{3: errors.New("transient")}}
	d := &Device{g: g}
	var p Peak
	if u, pr, n := p.Used(); u != 0 || pr != -1 || n != 0 {
		t.Fatalf("empty peak %d %d %d", u, pr, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var got []Sample
	var errs int
	done := make(chan struct{})
	go func() {
		d.Run(ctx, time.Millisecond, &p, func(_ time.Time, s Sample) {
			mu.Lock()
			got = append(got, s)
			n := len(got)
			mu.Unlock()
			if n == 5 {
				cancel()
			}
		}, func(error) { errs++ })
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop after its context was canceled")
	}
	if errs != 1 {
		t.Fatalf("%d errors reported, want 1", errs)
	}
	if got[0] != g.seq[0] || got[1] != g.seq[1] || got[3] != g.seq[1] {
		t.Fatalf("samples out of order: %+v", got)
	}
	used, proc, n := p.Used()
	if used != 70 || proc != 60 || n < 5 {
		t.Fatalf("peak used %d process %d over %d samples", used, proc, n)
	}
}
