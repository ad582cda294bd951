package npz

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// readNPY reads a whole .npy stream of exactly size bytes from r.
func readNPY(r io.Reader, size int64) (*Array, error) {
	h, used, err := readNPYHeader(r)
	if err != nil {
		return nil, err
	}
	want := int64(h.count) * int64(h.dt.size)
	if got := size - used; got != want {
		return nil, fmt.Errorf("shape %v of %s needs %d data bytes, the member holds %d", h.shape, h.descr, want, got)
	}
	a := &Array{Shape: h.shape, Descr: h.descr}
	n := h.count
	var raw []byte
	switch h.dt.kind {
	case 'b':
		d := make([]bool, n)
		a.Data, raw = d, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(d))), n)
	case 'i', 'u':
		a.Data, raw = makeInts(h.dt.kind, h.dt.size, n)
	case 'f':
		if h.dt.size == 4 {
			d := make([]float32, n)
			a.Data, raw = d, bytesOf(d)
		} else {
			d := make([]float64, n)
			a.Data, raw = d, bytesOf(d)
		}
	case 'U':
		raw = make([]byte, want)
	}
	if h.dt.kind == 'b' {
		// Read into a byte buffer first: a bool must hold 0 or 1.
		buf := make([]byte, n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, fmt.Errorf("reading %d data bytes: %w", want, eofIsTruncated(err))
		}
		for i, c := range buf {
			raw[i] = c & 1
			if c > 1 {
				raw[i] = 1
			}
		}
	} else if _, err := io.ReadFull(r, raw); err != nil {
		return nil, fmt.Errorf("reading %d data bytes: %w", want, eofIsTruncated(err))
	}
	if err := expectEOF(r); err != nil {
		return nil, err
	}
	if h.dt.kind == 'U' {
		strs, err := decodeUnicode(raw, h.dt.size/4, n, h.dt.swap)
		if err != nil {
			return nil, err
		}
		a.Data = strs
	} else if h.dt.swap {
		swapBytes(raw, h.dt.size)
	}
	return a, nil
}

// expectEOF checks that r has nothing left; for zip members this is also
// where the CRC of the member is verified.
func expectEOF(r io.Reader) error {
	var one [1]byte
	n, err := r.Read(one[:])
	for n == 0 && err == nil {
		n, err = r.Read(one[:])
	}
	if n > 0 {
		return errors.New("data continues after the array's last element")
	}
	if err != io.EOF {
		return fmt.Errorf("reading the end of the array: %w", err)
	}
	return nil
}

func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(s[0])))
}

func makeInts(kind byte, size, n int) (any, []byte) {
	switch {
	case kind == 'i' && size == 1:
		d := make([]int8, n)
		return d, bytesOf(d)
	case kind == 'u' && size == 1:
		d := make([]uint8, n)
		return d, d
	case kind == 'i' && size == 2:
		d := make([]int16, n)
		return d, bytesOf(d)
	case kind == 'u' && size == 2:
		d := make([]uint16, n)
		return d, bytesOf(d)
	case kind == 'i' && size == 4:
		d := make([]int32, n)
		return d, bytesOf(d)
	case kind == 'u' && size == 4:
		d := make([]uint32, n)
		return d, bytesOf(d)
	case kind == 'i':
		d := make([]int64, n)
		return d, bytesOf(d)
	default:
		d := make([]uint64, n)
		return d, bytesOf(d)
	}
}

func swapBytes(b []byte, size int) {
	for i := 0; i+size <= len(b); i += size {
		for l, r := i, i+size-1; l < r; l, r = l+1, r-1 {
			b[l], b[r] = b[r], b[l]
		}
	}
}

// decodeUnicode decodes n fixed-width UTF-32 strings of width characters;
// trailing NULs are padding.
func decodeUnicode(raw []byte, width, n int, swap bool) ([]string, error) {
	out := make([]string, n)
	var b strings.Builder
	storedLittle := hostLittle != swap
	order := binary.ByteOrder(binary.LittleEndian)
	if !storedLittle {
		order = binary.BigEndian
	}
	for i := range n {
		b.Reset()
		rec := raw[i*width*4 : (i+1)*width*4]
		end := width
		for end > 0 && order.Uint32(rec[(end-1)*4:]) == 0 {
			end--
		}
		for j := 0; j < end; j++ {
			c := order.Uint32(rec[j*4:])
			if c > utf8.MaxRune || (c >= 0xD800 && c < 0xE000) {
				return nil, fmt.Errorf("string %d holds invalid code point %#x", i, c)
			}
			b.WriteRune(rune(c))
		}
		out[i] = b.String()
	}
	return out, nil
}
