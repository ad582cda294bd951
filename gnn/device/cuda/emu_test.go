package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/device/cpu"
)

// TestKernelsEmulated compiles the CUDA C kernels as C++ against the
// emulation shim of internal/emu (one OS thread per CUDA thread, barriers
// for __syncthreads and warp shuffles) and runs internal/emu/harness.cpp,
// which checks every kernel against a reference loop on the CPU (and the
// CUDA C Philox4x32-10 against its known answers); then it compares the
// dropout masks the kernel generated, launched as DropoutMask launches it,
// with the CPU backend's, which must be bit-identical, and the neighbors
// the sampling kernel drew with the reference draw (sample.DrawHop), also
// bit-identical, testing their uniformity with a chi-square test. It needs g++ with C++20 (g++ 12) and checks
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
	cases := filepath.Join(dir, "dropout.txt")
	masks := filepath.Join(dir, "masks.bin")
	shapes := dropoutCases()
	if err := writeDropoutCases(cases, shapes); err != nil {
		t.Fatal(err)
	}
	sampleFile := filepath.Join(dir, "sample.txt")
	draws := filepath.Join(dir, "draws.bin")
	scs := sampleCases()
	if err := writeSampleCases(sampleFile, scs); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, cases, masks, sampleFile, draws).CombinedOutput(); err != nil {
		t.Fatalf("emulated kernels: %v\n%s", err, out)
	}
	checkSampleDraws(t, draws, scs)
	b, err := os.ReadFile(masks)
	if err != nil {
		t.Fatal(err)
	}
	dev := cpu.New(2, 0)
	off := 0
	for _, c := range shapes {
		m, err := dev.Alloc(c.rows, c.cols)
		if err != nil {
			t.Fatal(err)
		}
		dev.DropoutMask(m, c.p, c.seed)
		if off+4*m.Len() > len(b) {
			t.Fatalf("%d mask bytes, %+v needs more", len(b), c)
		}
		for i, want := range m.Data {
			got := math.Float32frombits(binary.LittleEndian.Uint32(b[off+4*i:]))
			if math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("dropout %+v element %d: kernel %v, CPU %v", c, i, got, want)
			}
		}
		off += 4 * m.Len()
		dev.Free(m)
	}
	if off != len(b) {
		t.Fatalf("%d mask bytes, compared %d", len(b), off)
	}
}

// dropoutCase is one mask that the emulated kernel and the CPU backend
// generate: its shape, drop probability, seed, and the cap on the grid
// (small caps make every thread stride over several Philox blocks).
type dropoutCase struct {
	rows, cols int
	p          float32
	seed       uint64
	maxBlocks  int
}

func dropoutCases() []dropoutCase {
	var cs []dropoutCase
	for _, sh := range [][2]int{{1, 1}, {3, 5}, {65, 3}, {130, 7}, {257, 33}} {
		for _, p := range []float32{0.5, 0.1, 1.0 / 3, 0.9} {
			for _, seed := range []uint64{12345, 1<<63 + 7} {
				cs = append(cs, dropoutCase{sh[0], sh[1], p, seed, 1 + len(cs)%3})
			}
		}
	}
	return cs
}

// writeDropoutCases writes one line per case for the harness, with the
// arguments DropoutMask launches dropout_mask with: element count, seed,
// threshold, keep value (float32 bits) and grid.
func writeDropoutCases(path string, cs []dropoutCase) error {
	var b strings.Builder
	for _, c := range cs {
		n := int64(c.rows) * int64(c.cols)
		keep := 1 / (1 - c.p)
		fmt.Fprintf(&b, "%d %d %d %d %d\n", n, c.seed, dropoutThresh(c.p), math.Float32bits(keep), dropoutGrid(n, c.maxBlocks))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
