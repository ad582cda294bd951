package npz

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// dtype describes one supported element type.
type dtype struct {
	kind byte // 'b', 'i', 'u', 'f', 'U'
	size int  // bytes per element (for 'U': 4 × characters)
	swap bool // stored in the other byte order than this machine's
}

var hostLittle = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// parseDescr decodes a NumPy dtype string.
func parseDescr(descr string) (dtype, error) {
	if len(descr) == 2 && descr[1] == 'O' {
		return dtype{}, fmt.Errorf("dtype %q holds pickled Python objects: %w", descr, ErrUnsupported)
	}
	if len(descr) < 3 {
		return dtype{}, fmt.Errorf("dtype %q: %w dtype", descr, ErrUnsupported)
	}
	order, kind, sizeStr := descr[0], descr[1], descr[2:]
	size, err := strconv.Atoi(sizeStr)
	if err != nil || size <= 0 {
		return dtype{}, fmt.Errorf("dtype %q: %w dtype", descr, ErrUnsupported)
	}
	if kind == 'O' {
		return dtype{}, fmt.Errorf("dtype %q holds pickled Python objects: %w", descr, ErrUnsupported)
	}
	dt := dtype{kind: kind, size: size}
	switch kind {
	case 'b':
		if size != 1 {
			return dtype{}, fmt.Errorf("dtype %q: %w boolean size", descr, ErrUnsupported)
		}
	case 'i', 'u':
		if size != 1 && size != 2 && size != 4 && size != 8 {
			return dtype{}, fmt.Errorf("dtype %q: %w integer size", descr, ErrUnsupported)
		}
	case 'f':
		if size != 4 && size != 8 {
			return dtype{}, fmt.Errorf("dtype %q: %w float size (only float32 and float64)", descr, ErrUnsupported)
		}
	case 'U':
		if size > 1<<20 {
			return dtype{}, fmt.Errorf("dtype %q: string width too large", descr)
		}
		dt.size = 4 * size
	default:
		return dtype{}, fmt.Errorf("dtype %q: %w kind %q", descr, ErrUnsupported, kind)
	}
	elem := dt.size
	if kind == 'U' {
		elem = 4
	}
	switch order {
	case '|':
		if elem != 1 {
			return dtype{}, fmt.Errorf("dtype %q: byte order '|' on a multi-byte type", descr)
		}
	case '=':
	case '<':
		dt.swap = elem > 1 && !hostLittle
	case '>':
		dt.swap = elem > 1 && hostLittle
	default:
		return dtype{}, fmt.Errorf("dtype %q: unknown byte order %q", descr, order)
	}
	return dt, nil
}

// npyHeader is the decoded header of one .npy stream.
type npyHeader struct {
	descr string
	dt    dtype
	shape []int
	count int // number of elements
}

const (
	npyMagic        = "\x93NUMPY"
	npyMaxHeaderLen = 1 << 16
	maxElements     = 1 << 40
)

// readNPYHeader reads the magic, version and header dictionary from r and
// returns the header and the number of bytes consumed.
func readNPYHeader(r io.Reader) (*npyHeader, int64, error) {
	var pre [10]byte
	if _, err := io.ReadFull(r, pre[:8]); err != nil {
		return nil, 0, fmt.Errorf("reading .npy preamble: %w", eofIsTruncated(err))
	}
	if string(pre[:6]) != npyMagic {
		return nil, 0, errors.New("not a .npy array (bad magic)")
	}
	major, minor := pre[6], pre[7]
	var hlen, used int64
	switch major {
	case 1:
		if _, err := io.ReadFull(r, pre[8:10]); err != nil {
			return nil, 0, fmt.Errorf("reading .npy header length: %w", eofIsTruncated(err))
		}
		hlen, used = int64(binary.LittleEndian.Uint16(pre[8:10])), 10
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, 0, fmt.Errorf("reading .npy header length: %w", eofIsTruncated(err))
		}
		hlen, used = int64(binary.LittleEndian.Uint32(b[:])), 12
	default:
		return nil, 0, fmt.Errorf(".npy format version %d.%d: %w (only 1.0, 2.0 and 3.0)", major, minor, ErrUnsupported)
	}
	if minor != 0 {
		return nil, 0, fmt.Errorf(".npy format version %d.%d: %w (only 1.0, 2.0 and 3.0)", major, minor, ErrUnsupported)
	}
	if hlen > npyMaxHeaderLen {
		return nil, 0, fmt.Errorf(".npy header of %d bytes is implausibly long", hlen)
	}
	hb := make([]byte, hlen)
	if _, err := io.ReadFull(r, hb); err != nil {
		return nil, 0, fmt.Errorf("reading .npy header (%d bytes): %w", hlen, eofIsTruncated(err))
	}
	text := string(hb)
	if major == 3 {
		if !utf8.ValidString(text) {
			return nil, 0, errors.New(".npy header is not valid UTF-8")
		}
	} else {
		// Versions 1 and 2 use latin-1; the dictionary itself is ASCII.
		for _, c := range hb {
			if c >= 0x80 {
				return nil, 0, errors.New(".npy header contains non-ASCII bytes")
			}
		}
	}
	h, err := parseHeaderDict(text)
	if err != nil {
		return nil, 0, fmt.Errorf(".npy header %q: %w", strings.TrimSpace(text), err)
	}
	return h, used + hlen, nil
}

func eofIsTruncated(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("data ends early (truncated)")
	}
	return err
}

// parseHeaderDict parses the Python dict literal of a .npy header, such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (5429,), }.
func parseHeaderDict(s string) (*npyHeader, error) {
	p := &pyParser{s: s}
	dict, err := p.dict()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.s) {
		return nil, fmt.Errorf("unexpected text after the dictionary at byte %d", p.i)
	}
	for k := range dict {
		if k != "descr" && k != "fortran_order" && k != "shape" {
			return nil, fmt.Errorf("unexpected key %q", k)
		}
	}
	descr, ok := dict["descr"].(string)
	if !ok {
		if _, isList := dict["descr"].(pyList); isList {
			return nil, fmt.Errorf("structured (record) dtype: %w", ErrUnsupported)
		}
		return nil, errors.New("missing or malformed 'descr'")
	}
	fortran, ok := dict["fortran_order"].(bool)
	if !ok {
		return nil, errors.New("missing or malformed 'fortran_order'")
	}
	shape, ok := dict["shape"].([]int)
	if !ok {
		return nil, errors.New("missing or malformed 'shape'")
	}
	if fortran {
		return nil, fmt.Errorf("array is stored in Fortran (column-major) order: %w; re-save it with numpy.ascontiguousarray", ErrUnsupported)
	}
	dt, err := parseDescr(descr)
	if err != nil {
		return nil, err
	}
	count := uint64(1)
	for _, d := range shape {
		if d < 0 {
			return nil, fmt.Errorf("negative dimension in shape %v", shape)
		}
		hi, lo := bits.Mul64(count, uint64(d))
		if hi != 0 || lo > maxElements {
			return nil, fmt.Errorf("shape %v has too many elements", shape)
		}
		count = lo
	}
	if hi, lo := bits.Mul64(count, uint64(dt.size)); hi != 0 || lo > maxElements*8 {
		return nil, fmt.Errorf("shape %v is too large", shape)
	}
	return &npyHeader{descr: descr, dt: dt, shape: shape, count: int(count)}, nil
}
