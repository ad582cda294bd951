package hostmem

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestAllocZeroedWritable: a matrix is zeroed and holds what is written,
// large ones mapped where the system maps, small ones from the heap.
func TestAllocZeroedWritable(t *testing.T) {
	for _, n := range []int{10, minMapped / 4, 3 << 20} {
		m := Alloc(n)
		if len(m.Data) != n {
			t.Fatalf("%d values: len %d", n, len(m.Data))
		}
		wantMapped := n*4 >= minMapped
		if runtime.GOOS == "linux" && m.Mapped() != wantMapped {
			t.Fatalf("%d values: mapped %v", n, m.Mapped())
		}
		for i, v := range m.Data {
			if v != 0 {
				t.Fatalf("%d values: value %d is %v", n, i, v)
			}
			m.Data[i] = float32(i)
		}
		if m.Data[n-1] != float32(n-1) {
			t.Fatal("write lost")
		}
		if err := m.Free(); err != nil {
			t.Fatal(err)
		}
		if m.Data != nil || m.Free() != nil {
			t.Fatal("Free left data, or failed the second time")
		}
	}
	var none *Matrix
	if none.Free() != nil {
		t.Fatal("Free of nil")
	}
}

// TestFreeReturnsMemory: on Linux, freeing a touched 64 MiB matrix
// lowers the process's resident anonymous memory by about its size
// straight away, with no collection.
func TestFreeReturnsMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("resident memory is read from /proc (Linux)")
	}
	m := Alloc(16 << 20)
	for i := range m.Data {
		m.Data[i] = 1
	}
	before := rssAnonKB(t)
	if err := m.Free(); err != nil {
		t.Fatal(err)
	}
	if fell := before - rssAnonKB(t); fell < 60<<10 {
		t.Fatalf("resident anonymous memory fell by %d kB, want about %d", fell, 64<<10)
	}
}

func rssAnonKB(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("no RssAnon")
	return 0
}
