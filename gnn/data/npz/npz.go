package npz

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gnnscope/gnnscope/gnn/data"
)

// File is an open .npz archive. Arrays are read one at a time with Read, so
// members that are not needed (or not readable, such as pickled objects)
// cost nothing.
type File struct {
	name string // used in error messages
	size int64
	// memLimit bounds each array's declared size (see data.CheckAlloc);
	// 0 means the memory available on the host.
	memLimit int64
	zr       *zip.Reader
	closer   io.Closer
	members  map[string]*zip.File
	names    []string
}

// Open opens the .npz file at path.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("npz %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("npz %s: %w", path, err)
	}
	if fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("npz %s: is a directory", path)
	}
	z, err := NewReader(f, fi.Size(), path)
	if err != nil {
		f.Close()
		return nil, err
	}
	z.closer = f
	return z, nil
}

// NewReader reads an .npz archive of size bytes from r; name is used in
// error messages.
func NewReader(r io.ReaderAt, size int64, name string) (*File, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		if errors.Is(err, zip.ErrFormat) {
			return nil, fmt.Errorf("npz %s: not a valid .npz (zip) archive, or truncated: %w", name, err)
		}
		return nil, fmt.Errorf("npz %s: %w", name, err)
	}
	f := &File{name: name, size: size, zr: zr, members: make(map[string]*zip.File, len(zr.File))}
	for _, m := range zr.File {
		key := strings.TrimSuffix(m.Name, ".npy")
		if _, dup := f.members[key]; dup {
			return nil, fmt.Errorf("npz %s: array %q stored twice", name, key)
		}
		f.members[key] = m
		f.names = append(f.names, key)
	}
	slices.Sort(f.names)
	return f, nil
}

// Close releases the underlying file (if Open opened it).
func (f *File) Close() error {
	if f.closer == nil {
		return nil
	}
	return f.closer.Close()
}

// Names returns the names of the arrays in the archive (member names
// without the .npy suffix), sorted.
func (f *File) Names() []string { return slices.Clone(f.names) }

// Has reports whether the archive holds an array with this name.
func (f *File) Has(name string) bool { _, ok := f.members[name]; return ok }

// Read reads one array. Errors name the file and the array.
func (f *File) Read(name string) (*Array, error) {
	m, ok := f.members[name]
	if !ok {
		return nil, fmt.Errorf("npz %s: no array %q (arrays: %s)", f.name, name, strings.Join(f.names, ", "))
	}
	a, err := f.read(m)
	if err != nil {
		return nil, fmt.Errorf("npz %s: array %q: %w", f.name, name, err)
	}
	return a, nil
}

func (f *File) read(m *zip.File) (*Array, error) {
	off, err := m.DataOffset()
	if err != nil {
		return nil, fmt.Errorf("locating member data: %w", eofIsTruncated(err))
	}
	comp, size := m.CompressedSize64, m.UncompressedSize64
	if off < 0 || comp > uint64(f.size) || uint64(off)+comp > uint64(f.size) {
		return nil, fmt.Errorf("member data (%d bytes at offset %d) extends past the end of the file (%d bytes): truncated", comp, off, f.size)
	}
	switch m.Method {
	case zip.Store:
		if size != comp {
			return nil, fmt.Errorf("stored member claims %d bytes but occupies %d", size, comp)
		}
	case zip.Deflate:
		// Deflate cannot expand data more than about 1032 times; a larger
		// claim is a damaged or hostile header, refused before allocating.
		if size > comp*1100+1024 {
			return nil, fmt.Errorf("deflated member claims %d bytes from %d compressed bytes", size, comp)
		}
	default:
		return nil, fmt.Errorf("compression method %d: %w (only stored and deflated members)", m.Method, ErrUnsupported)
	}
	if size > 1<<62 {
		return nil, fmt.Errorf("member size %d is implausible", size)
	}
	if err := data.CheckAlloc(fmt.Sprintf("its declared size of %d bytes", size), int64(size), f.memLimit); err != nil {
		return nil, err
	}
	rc, err := m.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	// The zip reader stops with ErrFormat as soon as a member decompresses
	// to more than its declared size, so a false size costs no memory.
	a, err := readNPY(bufio.NewReaderSize(rc, 1<<16), int64(size))
	if errors.Is(err, zip.ErrFormat) {
		return nil, fmt.Errorf("member holds more data than its declared size of %d bytes (damaged or forged archive): %w", size, err)
	}
	return a, err
}

// ReadAll reads every array of the archive at path.
func ReadAll(path string) (map[string]*Array, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := make(map[string]*Array, len(f.names))
	for _, name := range f.names {
		a, err := f.Read(name)
		if err != nil {
			return nil, err
		}
		out[name] = a
	}
	return out, nil
}

// Write saves arrays to path as an uncompressed .npz, like numpy.savez; the
// map keys become the array names. The file is written to a temporary name
// and renamed into place.
func Write(path string, arrays map[string]*Array) error { return writeFile(path, arrays, false) }

// WriteCompressed is Write with deflated members, like numpy.savez_compressed.
func WriteCompressed(path string, arrays map[string]*Array) error {
	return writeFile(path, arrays, true)
}

func writeFile(path string, arrays map[string]*Array, compress bool) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("npz %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriterSize(tmp, 1<<20)
	if err := Encode(w, arrays, compress); err != nil {
		return fmt.Errorf("npz %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("npz %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("npz %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("npz %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("npz %s: %w", path, err)
	}
	return nil
}

// Encode writes arrays as an .npz archive to w, members in name order.
func Encode(w io.Writer, arrays map[string]*Array, compress bool) error {
	zw := zip.NewWriter(w)
	names := make([]string, 0, len(arrays))
	for name := range arrays {
		names = append(names, name)
	}
	slices.Sort(names)
	method := zip.Store
	if compress {
		method = zip.Deflate
	}
	for _, name := range names {
		if name == "" || strings.ContainsAny(name, "/\\") {
			return fmt.Errorf("array name %q is not a plain file name", name)
		}
		mw, err := zw.CreateHeader(&zip.FileHeader{
			Name:     name + ".npy",
			Method:   method,
			Modified: time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC),
		})
		if err != nil {
			return err
		}
		if err := EncodeNPY(mw, arrays[name]); err != nil {
			return fmt.Errorf("array %q: %w", name, err)
		}
	}
	return zw.Close()
}

// EncodeNPY writes one array in the .npy format (version 1.0, or 2.0 when
// the header needs it), little-endian, C order.
func EncodeNPY(w io.Writer, a *Array) error {
	if a == nil {
		return errors.New("nil array")
	}
	descr, raw, err := encodeData(a.Data)
	if err != nil {
		return err
	}
	shape := a.Shape
	if shape == nil {
		shape = []int{a.Len()}
	}
	count := 1
	for _, d := range shape {
		if d < 0 {
			return fmt.Errorf("negative dimension in shape %v", shape)
		}
		count *= d
	}
	if count != a.Len() {
		return fmt.Errorf("shape %v has %d elements but the data has %d", shape, count, a.Len())
	}
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = fmt.Sprint(d)
	}
	tuple := "(" + strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	tuple += ")"
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, tuple)
	// Pad with spaces so that the data starts at a multiple of 64 bytes;
	// the header ends with a newline.
	pre := 10
	total := pre + len(dict) + 1
	if total-pre > 65535 {
		pre = 12
		total = pre + len(dict) + 1
	}
	total = (total + 63) &^ 63
	hlen := total - pre
	hdr := make([]byte, total)
	copy(hdr, npyMagic)
	if pre == 10 {
		hdr[6] = 1
		binary.LittleEndian.PutUint16(hdr[8:], uint16(hlen))
	} else {
		hdr[6] = 2
		binary.LittleEndian.PutUint32(hdr[8:], uint32(hlen))
	}
	copy(hdr[pre:], dict)
	for i := pre + len(dict); i < total-1; i++ {
		hdr[i] = ' '
	}
	hdr[total-1] = '\n'
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	_, err = w.Write(raw)
	return err
}

// encodeData returns the dtype string and the little-endian bytes of data.
func encodeData(data any) (string, []byte, error) {
	var descr string
	var raw []byte
	size := 1
	switch d := data.(type) {
	case []bool:
		descr, raw = "|b1", bytesOf(d)
	case []int8:
		descr, raw = "|i1", bytesOf(d)
	case []uint8:
		descr, raw = "|u1", d
	case []int16:
		descr, raw, size = "<i2", bytesOf(d), 2
	case []uint16:
		descr, raw, size = "<u2", bytesOf(d), 2
	case []int32:
		descr, raw, size = "<i4", bytesOf(d), 4
	case []uint32:
		descr, raw, size = "<u4", bytesOf(d), 4
	case []int64:
		descr, raw, size = "<i8", bytesOf(d), 8
	case []uint64:
		descr, raw, size = "<u8", bytesOf(d), 8
	case []float32:
		descr, raw, size = "<f4", bytesOf(d), 4
	case []float64:
		descr, raw, size = "<f8", bytesOf(d), 8
	case []string:
		width := 1
		for _, s := range d {
			if !utf8.ValidString(s) {
				return "", nil, fmt.Errorf("string %q is not valid UTF-8", s)
			}
			width = max(width, utf8.RuneCountInString(s))
		}
		var buf bytes.Buffer
		buf.Grow(4 * width * len(d))
		var c [4]byte
		for _, s := range d {
			n := 0
			for _, r := range s {
				binary.LittleEndian.PutUint32(c[:], uint32(r))
				buf.Write(c[:])
				n++
			}
			buf.Write(make([]byte, 4*(width-n)))
		}
		return fmt.Sprintf("<U%d", width), buf.Bytes(), nil
	default:
		return "", nil, fmt.Errorf("unsupported data type %T", data)
	}
	if size > 1 && !hostLittle {
		raw = slices.Clone(raw)
		swapBytes(raw, size)
	}
	return descr, raw, nil
}
