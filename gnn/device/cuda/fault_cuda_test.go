//go:build cuda

package cuda

import (
	"errors"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/device/cuda/cudrv"
)

// TestDriverErrorIsSticky checks that a driver error becomes the device's
// fault, returned by Alloc, instead of a panic, and that a faulted device
// queues no more kernels. It needs no GPU: the device is never opened.
func TestDriverErrorIsSticky(t *testing.T) {
	d := &Device{name: "cuda:7"}
	boom := &cudrv.Error{Call: "cuLaunchKernel", Code: 719, Name: "CUDA_ERROR_LAUNCH_FAILED"}
	if d.must("launching gemm_nn", nil) != true || d.Err() != nil {
		t.Fatal("a nil error must not fault the device")
	}
	if d.must("launching gemm_nn", boom) {
		t.Fatal("must reported a driver error as success")
	}
	d.must("later call", errors.New("second"))
	_, err := d.Alloc(4, 4)
	if !errors.As(err, new(*cudrv.Error)) || !strings.Contains(err.Error(), "cuda:7: launching gemm_nn: cuLaunchKernel: CUDA_ERROR_LAUNCH_FAILED") {
		t.Fatalf("Alloc on a faulted device: %v", err)
	}
	// d.fns is empty: a launch that went on would panic on the unknown kernel.
	var a kargs
	d.launch("gemm_nn", 1, 1, 1, cudrv.Stream{}, &a)
}
