package cuda

import (
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/device/cpu"
)

// TestKernelsEmulated compiles the CUDA C kernels as C++ against the
// emulation shim of internal/emu (one OS thread per CUDA thread, barriers
// for __syncthreads and warp shuffles) and runs internal/emu/harness.cpp,
// which checks every kernel against a reference loop on the CPU; then it
// compares the dropout masks the kernel generated with the CPU backend's,
// which must be identical. It needs g++ with C++20 (g++ 12) and checks
// the kernels' logic, not their speed on a GPU.
func TestKernelsEmulated(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	sourceTree(t)
	cxx := ""
	for _, c := range []string{"g++-12", "g++-13", "g++-14", "g++"} {
		if p, err := exec.LookPath(c); err == nil {
			cxx = p
			break
		}
	}
	if cxx == "" {
		t.Skip("no g++ to compile the emulated kernels")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "harness")
	out, err := exec.Command(cxx, "-std=c++20", "-O1", "-pthread", "-w", "-o", bin, "internal/emu/harness.cpp").CombinedOutput()
	if err != nil {
		t.Skipf("%s cannot compile the emulation (C++20 barriers needed): %v\n%s", cxx, err, out)
	}
	masks := filepath.Join(dir, "masks.bin")
	if out, err := exec.Command(bin, masks).CombinedOutput(); err != nil {
		t.Fatalf("emulated kernels: %v\n%s", err, out)
	}
	b, err := os.ReadFile(masks)
	if err != nil {
		t.Fatal(err)
	}
	dev := cpu.New(1, 0)
	off := 0
	for _, p := range []float32{0.5, 0.1} {
		for _, shape := range [][2]int{{65, 3}, {130, 7}} {
			m, _ := dev.Alloc(shape[0], shape[1])
			dev.DropoutMask(m, p, 12345)
			for i, want := range m.Data {
				got := math.Float32frombits(binary.LittleEndian.Uint32(b[off+4*i:]))
				if math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("dropout p %v shape %v element %d: kernel %v, CPU %v", p, shape, i, got, want)
				}
			}
			off += 4 * m.Len()
			dev.Free(m)
		}
	}
	if off != len(b) {
		t.Fatalf("%d mask bytes, compared %d", len(b), off)
	}
}
