package cuda

import (
	"fmt"
	"math"
)

// maxArgs is the most parameters a kernel of this package takes.
const maxArgs = 16

// kargs packs kernel parameters for cuLaunchKernel: every parameter is
// stored as a uint64 whose low bytes hold the value (little-endian, as on
// every platform CUDA runs on), and the kernel reads as many as its
// parameter type has.
type kargs struct {
	vals  [maxArgs]uint64
	types [maxArgs]string // the PTX type each argument stands for
	n     int
}

func (a *kargs) push(v uint64, typ string) *kargs {
	if a.n == maxArgs {
		panic("cuda: too many kernel arguments")
	}
	a.vals[a.n] = v
	a.types[a.n] = typ
	a.n++
	return a
}

// ptr adds a device pointer.
func (a *kargs) ptr(p uintptr) *kargs { return a.push(uint64(p), ".u64") }

// i32 adds an int parameter.
func (a *kargs) i32(v int) *kargs {
	if v < math.MinInt32 || v > math.MaxInt32 {
		panic("cuda: int kernel argument out of range")
	}
	return a.push(uint64(uint32(int32(v))), ".u32")
}

// i64 adds a long long parameter.
func (a *kargs) i64(v int64) *kargs { return a.push(uint64(v), ".u64") }

// u32 adds an unsigned parameter.
func (a *kargs) u32(v uint32) *kargs { return a.push(uint64(v), ".u32") }

// u64 adds an unsigned long long parameter.
func (a *kargs) u64(v uint64) *kargs { return a.push(v, ".u64") }

// f32 adds a float parameter.
func (a *kargs) f32(v float32) *kargs { return a.push(uint64(math.Float32bits(v)), ".f32") }

// f64 adds a double parameter.
func (a *kargs) f64(v float64) *kargs { return a.push(math.Float64bits(v), ".f64") }

// check returns an error unless the arguments match a kernel's parameter
// types as its PTX declares them.
func (a *kargs) check(kernel string, params []string) error {
	if a.n != len(params) {
		return fmt.Errorf("cuda: kernel %s takes %d parameters, launched with %d", kernel, len(params), a.n)
	}
	for i, p := range params {
		if a.types[i] != p {
			return fmt.Errorf("cuda: kernel %s parameter %d is %s, launched with %s", kernel, i, p, a.types[i])
		}
	}
	return nil
}

// values returns the packed parameters.
func (a *kargs) values() []uint64 { return a.vals[:a.n] }
