package npz

import (
	"errors"
	"fmt"
	"math"
)

// ErrUnsupported marks arrays that are well-formed but use a feature this
// package does not read (object dtype, Fortran order, structured dtypes...).
var ErrUnsupported = errors.New("unsupported")

// Array is one NumPy array in C (row-major) order.
type Array struct {
	// Shape lists the dimensions; empty for a 0-d (scalar) array. Write
	// treats a nil Shape as one dimension holding all of Data.
	Shape []int
	// Data holds the elements in C order. Its type is one of []bool, []int8,
	// []uint8, []int16, []uint16, []int32, []uint32, []int64, []uint64,
	// []float32, []float64 or []string (NumPy unicode, "<U...").
	Data any
	// Descr is the NumPy dtype string as read, such as "<f4", "|i1" or
	// "<U22". Write ignores it and derives the dtype from Data.
	Descr string
}

// Len returns the number of elements in Data (0 for an unsupported type).
func (a *Array) Len() int {
	switch d := a.Data.(type) {
	case []bool:
		return len(d)
	case []int8:
		return len(d)
	case []uint8:
		return len(d)
	case []int16:
		return len(d)
	case []uint16:
		return len(d)
	case []int32:
		return len(d)
	case []uint32:
		return len(d)
	case []int64:
		return len(d)
	case []uint64:
		return len(d)
	case []float32:
		return len(d)
	case []float64:
		return len(d)
	case []string:
		return len(d)
	}
	return 0
}

// IsInteger reports whether the array holds integers or booleans.
func (a *Array) IsInteger() bool {
	switch a.Data.(type) {
	case []bool, []int8, []uint8, []int16, []uint16, []int32, []uint32, []int64, []uint64:
		return true
	}
	return false
}

// Int64s returns the elements of an integer or boolean array as int64 (a new
// slice, except for []int64 data, which is returned as is). Floating-point
// and string arrays are an error, as are uint64 values above MaxInt64.
func (a *Array) Int64s() ([]int64, error) {
	switch d := a.Data.(type) {
	case []int64:
		return d, nil
	case []bool:
		out := make([]int64, len(d))
		for i, v := range d {
			if v {
				out[i] = 1
			}
		}
		return out, nil
	case []int8:
		return widen(d), nil
	case []uint8:
		return widen(d), nil
	case []int16:
		return widen(d), nil
	case []uint16:
		return widen(d), nil
	case []int32:
		return widen(d), nil
	case []uint32:
		return widen(d), nil
	case []uint64:
		out := make([]int64, len(d))
		for i, v := range d {
			if v > math.MaxInt64 {
				return nil, fmt.Errorf("element %d = %d does not fit in int64", i, v)
			}
			out[i] = int64(v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("dtype %s is not an integer type", a.descrOrType())
}

func widen[T int8 | uint8 | int16 | uint16 | int32 | uint32](s []T) []int64 {
	out := make([]int64, len(s))
	for i, v := range s {
		out[i] = int64(v)
	}
	return out
}

// Float32s returns the elements of a numeric array as float32 (a new slice,
// except for []float32 data, which is returned as is). String arrays are an
// error.
func (a *Array) Float32s() ([]float32, error) {
	switch d := a.Data.(type) {
	case []float32:
		return d, nil
	case []float64:
		return narrow(d), nil
	case []bool:
		out := make([]float32, len(d))
		for i, v := range d {
			if v {
				out[i] = 1
			}
		}
		return out, nil
	case []int8:
		return narrow(d), nil
	case []uint8:
		return narrow(d), nil
	case []int16:
		return narrow(d), nil
	case []uint16:
		return narrow(d), nil
	case []int32:
		return narrow(d), nil
	case []uint32:
		return narrow(d), nil
	case []int64:
		return narrow(d), nil
	case []uint64:
		return narrow(d), nil
	}
	return nil, fmt.Errorf("dtype %s is not numeric", a.descrOrType())
}

func narrow[T int8 | uint8 | int16 | uint16 | int32 | uint32 | int64 | uint64 | float64](s []T) []float32 {
	out := make([]float32, len(s))
	for i, v := range s {
		out[i] = float32(v)
	}
	return out
}

func (a *Array) descrOrType() string {
	if a.Descr != "" {
		return a.Descr
	}
	return fmt.Sprintf("%T", a.Data)
}
