package planetoid

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/nlpodyssey/gopickle/pickle"
	"github.com/nlpodyssey/gopickle/types"

	"github.com/gnnscope/gnnscope/gnn/data"
)

// readPickle reads one pickled object from path. NumPy arrays come back as
// *ndarray, SciPy CSR matrices as *csrMatrix, defaultdicts as *intListDict;
// other classes are refused. The file is checked (checkOps) before the
// pickle machine runs, so that a broken file is an error, not a panic or
// an allocation of the size some corrupt length field says.
func readPickle(path string) (any, error) {
	v, _, err := readPickleSize(path)
	return v, err
}

// readPickleSize is readPickle that also returns the number of bytes read,
// against which callers bound what the decoded value may expand to.
func readPickleSize(path string) (v any, size int64, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	size = int64(len(b))
	if err := checkOps(b); err != nil {
		return nil, 0, fmt.Errorf("read pickle %s: %w", path, err)
	}
	u := pickle.NewUnpickler(bytes.NewReader(b))
	u.FindClass = findClass
	defer func() {
		if r := recover(); r != nil {
			v, size, err = nil, 0, fmt.Errorf("read pickle %s: malformed pickle (%v)", path, r)
		}
	}()
	v, err = u.Load()
	if err != nil {
		return nil, 0, fmt.Errorf("read pickle %s: %w", path, err)
	}
	return v, size, nil
}

// maxMarks bounds the MARKs open at once in a pickle. Planetoid's nest
// three deep at most; every open MARK costs the unpickler a saved stack, so
// a file of nothing but MARKs would cost hundreds of bytes per byte.
const maxMarks = 1000

// checkOps walks the opcodes of the pickle b up to its STOP without running
// them, as Python's pickletools.genops does, and fails on an unknown opcode,
// an argument past the end, a length field longer than the rest of the
// file, or more than maxMarks MARKs open at once.
func checkOps(b []byte) error {
	marks := 0
	for pos := 0; pos < len(b); {
		op := b[pos]
		at := pos
		pos++
		switch op {
		case '(': // MARK
			if marks++; marks > maxMarks {
				return fmt.Errorf("malformed pickle: more than %d MARKs open at byte %d", maxMarks, at)
			}
		case 'e', 'l', 't', 'u', 'd', 'o', '1', 'i', 0x90, 0x91: // the opcodes that pop to a MARK
			marks = max(marks-1, 0)
		}
		rest := len(b) - pos
		need := func(n int) error {
			if n < 0 || n > rest {
				return fmt.Errorf("malformed pickle: opcode 0x%02x at byte %d needs %d bytes, %d left", op, at, n, rest)
			}
			pos += n
			return nil
		}
		counted := func(width int) error {
			if err := need(width); err != nil {
				return err
			}
			var n uint64
			for i := width - 1; i >= 0; i-- {
				n = n<<8 | uint64(b[pos-width+i])
			}
			if n > uint64(len(b)) {
				return fmt.Errorf("malformed pickle: opcode 0x%02x at byte %d counts %d bytes in a file of %d", op, at, n, len(b))
			}
			return need(int(n))
		}
		line := func() error {
			i := bytes.IndexByte(b[pos:], '\n')
			if i < 0 {
				return fmt.Errorf("malformed pickle: opcode 0x%02x at byte %d: no end of line", op, at)
			}
			pos += i + 1
			return nil
		}
		var err error
		switch op {
		case '.': // STOP
			return nil
		case '(', '0', '1', '2', 'N', 'R', 'a', 'b', 'd', '}', 'e', 'l', ']', 'o', 's', 't', ')', 'u', 'Q',
			0x81, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8f, 0x90, 0x91, 0x92, 0x93, 0x94, 0x97, 0x98:
		case 0x80, 'K', 'h', 'q', 0x82: // PROTO, BININT1, BINGET, BINPUT, EXT1
			err = need(1)
		case 'M', 0x83: // BININT2, EXT2
			err = need(2)
		case 'J', 'j', 'r', 0x84: // BININT, LONG_BINGET, LONG_BINPUT, EXT4
			err = need(4)
		case 'G': // BINFLOAT
			err = need(8)
		case 0x95: // FRAME: its length covers the opcodes that follow
			if err = need(8); err == nil {
				var n uint64
				for i := 7; i >= 0; i-- {
					n = n<<8 | uint64(b[pos-8+i])
				}
				if n > uint64(len(b)-pos) {
					err = fmt.Errorf("malformed pickle: frame at byte %d of %d bytes, %d left", at, n, len(b)-pos)
				}
			}
		case 'I', 'L', 'F', 'S', 'V', 'P', 'g', 'p':
			err = line()
		case 'c', 'i': // GLOBAL, INST: module and name lines
			if err = line(); err == nil {
				err = line()
			}
		case 'U', 'C', 0x8c, 0x8a: // 1-byte counts
			err = counted(1)
		case 'T', 'B', 'X', 0x8b: // 4-byte counts
			err = counted(4)
		case 0x8d, 0x8e, 0x96: // 8-byte counts
			err = counted(8)
		default:
			err = fmt.Errorf("malformed pickle: unknown opcode 0x%02x at byte %d", op, at)
		}
		if err != nil {
			return err
		}
	}
	return fmt.Errorf("malformed pickle: no STOP opcode (truncated?)")
}

// findClass resolves the globals a Planetoid pickle names: NumPy's array
// reconstruction and dtype, SciPy's CSR matrix (module paths of old and new
// versions), defaultdict and list for the graph, and _codecs.encode, by
// which Python 3 writes bytes into protocol-2 pickles.
func findClass(module, name string) (any, error) {
	switch module + "." + name {
	case "numpy.core.multiarray._reconstruct", "numpy._core.multiarray._reconstruct":
		return callFunc(reconstruct), nil
	case "numpy.ndarray":
		return ndarrayClass{}, nil
	case "numpy.dtype":
		return callFunc(newDtype), nil
	case "scipy.sparse.csr.csr_matrix", "scipy.sparse._csr.csr_matrix", "scipy.sparse._csr.csr_array":
		return csrClass{}, nil
	case "collections.defaultdict":
		return callFunc(func(...any) (any, error) { return &intListDict{}, nil }), nil
	case "__builtin__.list", "builtins.list":
		return types.NewGenericClass(module, name), nil
	case "_codecs.encode":
		return callFunc(latin1), nil
	}
	return nil, fmt.Errorf("unsupported class %s.%s in a Planetoid pickle (expected NumPy arrays, a SciPy CSR matrix or a dict of lists)", module, name)
}

// callFunc adapts a Go function to a pickle callable (REDUCE).
type callFunc func(args ...any) (any, error)

func (f callFunc) Call(args ...any) (any, error) { return f(args...) }

// latin1 is _codecs.encode(s, "latin1"): each character one byte.
func latin1(args ...any) (any, error) {
	if len(args) < 1 {
		return nil, fmt.Errorf("_codecs.encode: no argument")
	}
	s, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("_codecs.encode: argument %T, want a string", args[0])
	}
	if len(args) > 1 {
		if enc, _ := args[1].(string); enc != "latin1" && enc != "latin-1" && enc != "iso-8859-1" {
			return nil, fmt.Errorf("_codecs.encode: encoding %q, want latin1", enc)
		}
	}
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			return nil, fmt.Errorf("_codecs.encode: character %U outside latin1", r)
		}
		out = append(out, byte(r))
	}
	return out, nil
}

// asBytes returns the raw bytes of a pickled str (Python 2, read as Go
// string bytes) or bytes value.
func asBytes(v any) ([]byte, bool) {
	switch b := v.(type) {
	case string:
		return []byte(b), true
	case []byte:
		return b, true
	case *types.ByteArray:
		return []byte(*b), true
	}
	return nil, false
}

func asInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case int64:
		return int(x), true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// dtype is a NumPy dtype of a fixed-size number: kind ('f', 'i', 'u' or
// 'b'), size in bytes and byte order.
type dtype struct {
	kind      byte
	size      int
	bigEndian bool
}

// newDtype is numpy.dtype(spec, align, copy): spec such as "f4", "i8", "b1".
func newDtype(args ...any) (any, error) {
	if len(args) < 1 {
		return nil, fmt.Errorf("numpy.dtype: no argument")
	}
	spec, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("numpy.dtype: argument %T, want a string", args[0])
	}
	spec = strings.TrimLeft(spec, "<>|=")
	if len(spec) < 2 {
		return nil, fmt.Errorf("numpy.dtype %q: unsupported", spec)
	}
	d := &dtype{kind: spec[0]}
	if _, err := fmt.Sscanf(spec[1:], "%d", &d.size); err != nil {
		return nil, fmt.Errorf("numpy.dtype %q: unsupported", spec)
	}
	switch {
	case d.kind == 'f' && (d.size == 4 || d.size == 8),
		(d.kind == 'i' || d.kind == 'u') && (d.size == 1 || d.size == 2 || d.size == 4 || d.size == 8),
		d.kind == 'b' && d.size == 1:
	default:
		return nil, fmt.Errorf("numpy.dtype %q: only numbers and booleans are supported", spec)
	}
	return d, nil
}

// PySetState takes the dtype's pickled state (version, byte order, ...).
func (d *dtype) PySetState(state any) error {
	t, ok := state.(*types.Tuple)
	if !ok || t.Len() < 2 {
		return fmt.Errorf("numpy.dtype state %T: want a tuple", state)
	}
	order, _ := t.Get(1).(string)
	d.bigEndian = order == ">"
	return nil
}

// ndarrayClass is numpy.ndarray, the first argument of _reconstruct.
type ndarrayClass struct{}

// ndarray is a NumPy array of numbers: its shape and raw bytes.
type ndarray struct {
	shape   []int
	dtype   *dtype
	fortran bool
	raw     []byte
}

// reconstruct is numpy.core.multiarray._reconstruct(ndarray, shape, dtype):
// an empty array that BUILD then fills.
func reconstruct(args ...any) (any, error) {
	if len(args) < 1 {
		return nil, fmt.Errorf("_reconstruct: no arguments")
	}
	if _, ok := args[0].(ndarrayClass); !ok {
		return nil, fmt.Errorf("_reconstruct of %T: only numpy.ndarray is supported (not a subclass such as a matrix)", args[0])
	}
	return &ndarray{}, nil
}

// PySetState takes the array's pickled state: (version, shape, dtype,
// is_fortran, data).
func (a *ndarray) PySetState(state any) error {
	t, ok := state.(*types.Tuple)
	if !ok || t.Len() != 5 {
		return fmt.Errorf("numpy array state %T: want a 5-tuple", state)
	}
	shape, ok := t.Get(1).(*types.Tuple)
	if !ok {
		return fmt.Errorf("numpy array shape %T: want a tuple", t.Get(1))
	}
	a.shape = make([]int, shape.Len())
	n := 1
	for i := range a.shape {
		d, ok := asInt(shape.Get(i))
		if !ok || d < 0 {
			return fmt.Errorf("numpy array shape %v: want non-negative integers", shape)
		}
		if d > math.MaxInt32 || d > 0 && n > math.MaxInt/8/d {
			// The product would overflow and might wrap to the length of
			// the data, leaving indexes past it.
			return fmt.Errorf("numpy array shape %v: too many elements", shape)
		}
		a.shape[i] = d
		n *= d
	}
	if a.dtype, ok = t.Get(2).(*dtype); !ok {
		return fmt.Errorf("numpy array dtype %T: unsupported", t.Get(2))
	}
	a.fortran, _ = t.Get(3).(bool)
	if a.raw, ok = asBytes(t.Get(4)); !ok {
		return fmt.Errorf("numpy array data %T: only arrays of numbers are supported", t.Get(4))
	}
	if len(a.raw) != n*a.dtype.size {
		return fmt.Errorf("numpy array of shape %v: %d data bytes, want %d", a.shape, len(a.raw), n*a.dtype.size)
	}
	return nil
}

// filled reports an error for an array whose state was never set (a
// _reconstruct without BUILD): it has no dtype and no data.
func (a *ndarray) filled() error {
	if a.dtype == nil {
		return fmt.Errorf("numpy array without state (no dtype or data)")
	}
	return nil
}

// len returns the number of elements.
func (a *ndarray) len() int { return len(a.raw) / a.dtype.size }

// at returns element i of the flat data as a float64.
func (a *ndarray) at(i int) float64 {
	b := a.raw[i*a.dtype.size : (i+1)*a.dtype.size]
	var order binary.ByteOrder = binary.LittleEndian
	if a.dtype.bigEndian {
		order = binary.BigEndian
	}
	switch a.dtype.kind {
	case 'f':
		if a.dtype.size == 4 {
			return float64(math.Float32frombits(order.Uint32(b)))
		}
		return math.Float64frombits(order.Uint64(b))
	case 'i':
		switch a.dtype.size {
		case 1:
			return float64(int8(b[0]))
		case 2:
			return float64(int16(order.Uint16(b)))
		case 4:
			return float64(int32(order.Uint32(b)))
		}
		return float64(int64(order.Uint64(b)))
	}
	switch a.dtype.size { // 'u' and 'b'
	case 1:
		return float64(b[0])
	case 2:
		return float64(order.Uint16(b))
	case 4:
		return float64(order.Uint32(b))
	}
	return float64(order.Uint64(b))
}

// matrix returns a 2-D array's element (i, j).
func (a *ndarray) matrix(i, j int) float64 {
	if a.fortran {
		return a.at(j*a.shape[0] + i)
	}
	return a.at(i*a.shape[1] + j)
}

// ints returns a 1-D array of integers; floats with a fraction are an error.
func (a *ndarray) ints() ([]int64, error) {
	if err := a.filled(); err != nil {
		return nil, err
	}
	if len(a.shape) != 1 {
		return nil, fmt.Errorf("array of shape %v, want 1-D", a.shape)
	}
	out := make([]int64, a.len())
	for i := range out {
		v := a.at(i)
		if v != math.Trunc(v) {
			return nil, fmt.Errorf("array element %d is %g, want an integer", i, v)
		}
		out[i] = int64(v)
	}
	return out, nil
}

// maxDenseValues bounds the dense size of a feature matrix: 2^30 values
// (4 GiB of float32), 100 times PubMed's. Larger graphs come in other
// formats (OGB), and a corrupt shape must not allocate without bound.
// Tests lower it.
var maxDenseValues int64 = 1 << 30

// csrClass is scipy.sparse.csr_matrix, created empty by NEWOBJ (or
// copy_reg._reconstructor) and filled by BUILD with its __dict__.
type csrClass struct{}

func (csrClass) PyNew(...any) (any, error) { return &csrMatrix{}, nil }

// csrMatrix is a SciPy CSR matrix.
type csrMatrix struct {
	rows, cols            int
	data, indices, indptr *ndarray
}

// PyDictSet takes one attribute of the matrix's __dict__.
func (m *csrMatrix) PyDictSet(key, value any) error {
	k, _ := key.(string)
	switch k {
	case "_shape":
		t, ok := value.(*types.Tuple)
		if !ok || t.Len() != 2 {
			return fmt.Errorf("csr_matrix _shape %v: want 2 integers", value)
		}
		r, ok1 := asInt(t.Get(0))
		c, ok2 := asInt(t.Get(1))
		if !ok1 || !ok2 || r < 0 || c < 0 {
			return fmt.Errorf("csr_matrix _shape %v: want 2 integers", value)
		}
		m.rows, m.cols = r, c
	case "data", "indices", "indptr":
		a, ok := value.(*ndarray)
		if !ok {
			return fmt.Errorf("csr_matrix %s: %T, want a numpy array", k, value)
		}
		switch k {
		case "data":
			m.data = a
		case "indices":
			m.indices = a
		default:
			m.indptr = a
		}
	}
	return nil
}

// dense returns the matrix as row-major float32 values, checking its
// structure and, before allocating, that the dense values fit in limit
// bytes (see data.CheckAlloc: 0 means the available memory).
func (m *csrMatrix) dense(limit int64) ([]float32, error) {
	if m.data == nil || m.indices == nil || m.indptr == nil {
		return nil, fmt.Errorf("csr_matrix without data, indices or indptr")
	}
	indptr, err := m.indptr.ints()
	if err != nil {
		return nil, fmt.Errorf("csr_matrix indptr: %w", err)
	}
	indices, err := m.indices.ints()
	if err != nil {
		return nil, fmt.Errorf("csr_matrix indices: %w", err)
	}
	if err := m.data.filled(); err != nil {
		return nil, fmt.Errorf("csr_matrix data: %w", err)
	}
	if len(indptr) != m.rows+1 || indptr[0] != 0 || indptr[m.rows] != int64(len(indices)) || m.data.len() != len(indices) {
		return nil, fmt.Errorf("csr_matrix of shape (%d, %d): indptr of %d entries for %d indices and %d values",
			m.rows, m.cols, len(indptr), len(indices), m.data.len())
	}
	if int64(m.rows)*int64(m.cols) > maxDenseValues {
		return nil, fmt.Errorf("csr_matrix of shape (%d, %d) is too large to hold dense (more than %d values)", m.rows, m.cols, maxDenseValues)
	}
	what := fmt.Sprintf("the dense %d×%d float32 matrix of a csr_matrix", m.rows, m.cols)
	if err := data.CheckAlloc(what, 4*int64(m.rows)*int64(m.cols), limit); err != nil {
		return nil, err
	}
	out := make([]float32, m.rows*m.cols)
	for r := range m.rows {
		if indptr[r+1] < indptr[r] {
			return nil, fmt.Errorf("csr_matrix indptr decreases at row %d", r)
		}
		if indptr[r+1] > int64(len(indices)) {
			return nil, fmt.Errorf("csr_matrix indptr at row %d is %d, past the %d indices", r, indptr[r+1], len(indices))
		}
		for k := indptr[r]; k < indptr[r+1]; k++ {
			c := indices[k]
			if c < 0 || c >= int64(m.cols) {
				return nil, fmt.Errorf("csr_matrix row %d: column %d outside [0, %d)", r, c, m.cols)
			}
			out[r*m.cols+int(c)] += float32(m.data.at(int(k)))
		}
	}
	return out, nil
}

// intListDict is the graph pickle: a defaultdict(list) (or dict) from node
// id to its neighbor list, in file order.
type intListDict struct {
	keys  []any
	lists []any
}

// Set adds one key and its value (SETITEM, SETITEMS).
func (d *intListDict) Set(key, value any) {
	d.keys = append(d.keys, key)
	d.lists = append(d.lists, value)
}
