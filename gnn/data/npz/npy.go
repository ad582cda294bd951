package npz

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
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

type pyList struct{}

// pyParser reads the small subset of Python literals used by .npy headers:
// a dict with string keys whose values are strings, booleans, tuples of ints
// (or lists, recognized only to reject structured dtypes).
type pyParser struct {
	s string
	i int
}

func (p *pyParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *pyParser) peek() byte {
	p.space()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *pyParser) expect(c byte) error {
	if p.peek() != c {
		return fmt.Errorf("expected %q at byte %d", c, p.i)
	}
	p.i++
	return nil
}

func (p *pyParser) dict() (map[string]any, error) {
	if err := p.expect('{'); err != nil {
		return nil, err
	}
	out := map[string]any{}
	for {
		if p.peek() == '}' {
			p.i++
			return out, nil
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if err := p.expect(':'); err != nil {
			return nil, err
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("key %q repeated", key)
		}
		out[key] = v
		switch p.peek() {
		case ',':
			p.i++
		case '}':
		default:
			return nil, fmt.Errorf("expected ',' or '}' at byte %d", p.i)
		}
	}
}

func (p *pyParser) str() (string, error) {
	q := p.peek()
	if q != '\'' && q != '"' {
		return "", fmt.Errorf("expected a string at byte %d", p.i)
	}
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == q:
			return b.String(), nil
		case c == '\\':
			if p.i >= len(p.s) {
				return "", errors.New("unterminated string")
			}
			b.WriteByte(p.s[p.i])
			p.i++
		default:
			b.WriteByte(c)
		}
	}
	return "", errors.New("unterminated string")
}

func (p *pyParser) value() (any, error) {
	switch c := p.peek(); {
	case c == '\'' || c == '"':
		return p.str()
	case c == '(':
		return p.tuple()
	case c == '[':
		return p.skipList()
	case strings.HasPrefix(p.s[p.i:], "True"):
		p.i += 4
		return true, nil
	case strings.HasPrefix(p.s[p.i:], "False"):
		p.i += 5
		return false, nil
	}
	return nil, fmt.Errorf("unexpected value at byte %d", p.i)
}

// skipList skips a (nested) list literal; only structured dtypes use lists,
// and the caller rejects them.
func (p *pyParser) skipList() (pyList, error) {
	depth := 0
	for p.i < len(p.s) {
		switch c := p.s[p.i]; c {
		case '[', '(':
			depth++
			p.i++
		case ']', ')':
			depth--
			p.i++
			if depth == 0 {
				return pyList{}, nil
			}
		case '\'', '"':
			if _, err := p.str(); err != nil {
				return pyList{}, err
			}
		default:
			p.i++
		}
	}
	return pyList{}, errors.New("unterminated list")
}

func (p *pyParser) tuple() ([]int, error) {
	p.i++ // '('
	out := []int{}
	for {
		if p.peek() == ')' {
			p.i++
			return out, nil
		}
		start := p.i
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		if p.i == start {
			return nil, fmt.Errorf("expected a dimension at byte %d", p.i)
		}
		v, err := strconv.ParseInt(p.s[start:p.i], 10, 64)
		if err != nil || v > maxElements {
			return nil, fmt.Errorf("dimension %q too large", p.s[start:p.i])
		}
		if p.i < len(p.s) && p.s[p.i] == 'L' { // Python 2 long
			p.i++
		}
		out = append(out, int(v))
		if len(out) > 32 {
			return nil, errors.New("more than 32 dimensions")
		}
		switch p.peek() {
		case ',':
			p.i++
		case ')':
		default:
			return nil, fmt.Errorf("expected ',' or ')' at byte %d", p.i)
		}
	}
}

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
