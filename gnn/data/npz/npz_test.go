package npz

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// rawNPY builds a .npy stream by hand: magic, version, header text (padded
// to a multiple of 64 bytes with a final newline) and data.
func rawNPY(major byte, header string, data []byte) []byte {
	pre := 10
	if major >= 2 {
		pre = 12
	}
	total := (pre + len(header) + 1 + 63) &^ 63
	hlen := total - pre
	b := make([]byte, 0, total+len(data))
	b = append(b, npyMagic...)
	b = append(b, major, 0)
	if major >= 2 {
		b = binary.LittleEndian.AppendUint32(b, uint32(hlen))
	} else {
		b = binary.LittleEndian.AppendUint16(b, uint16(hlen))
	}
	b = append(b, header...)
	for len(b) < total-1 {
		b = append(b, ' ')
	}
	b = append(b, '\n')
	return append(b, data...)
}

// zipOf builds an .npz from raw members (names get the .npy suffix).
func zipOf(t testing.TB, method uint16, members map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range sortedKeys(members) {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name + ".npy", Method: method})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(members[name])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := range keys { // tiny maps: insertion sort
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

func openBytes(t testing.TB, b []byte) (*File, error) {
	t.Helper()
	return NewReader(bytes.NewReader(b), int64(len(b)), "test.npz")
}

func allTypes() map[string]*Array {
	return map[string]*Array{
		"b1":     {Data: []bool{true, false, true}},
		"i1":     {Data: []int8{-128, 0, 127}},
		"u1":     {Data: []uint8{0, 200, 255}},
		"i2":     {Data: []int16{-30000, 1, 30000}},
		"u2":     {Data: []uint16{0, 65535}},
		"i4":     {Shape: []int{2, 3}, Data: []int32{1, -2, 3, -4, 5, -6}},
		"u4":     {Data: []uint32{4000000000}},
		"i8":     {Data: []int64{-1 << 40, 1 << 40}},
		"u8":     {Data: []uint64{1 << 63}},
		"f4":     {Shape: []int{3, 1}, Data: []float32{1.5, -2.25, 3}},
		"f8":     {Data: []float64{1e300, -0.5}},
		"U":      {Data: []string{"Case_Based", "", "Ünïcødé ✓"}},
		"scalar": {Shape: []int{}, Data: []int64{42}},
		"empty":  {Shape: []int{0, 5}, Data: []float32{}},
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, compress := range []bool{false, true} {
		path := filepath.Join(dir, "all.npz")
		in := allTypes()
		var err error
		if compress {
			err = WriteCompressed(path, in)
		} else {
			err = Write(path, in)
		}
		if err != nil {
			t.Fatal(err)
		}
		out, err := ReadAll(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != len(in) {
			t.Fatalf("read %d arrays, wrote %d", len(out), len(in))
		}
		for name, a := range in {
			b := out[name]
			wantShape := a.Shape
			if wantShape == nil {
				wantShape = []int{a.Len()}
			}
			if !reflect.DeepEqual(b.Shape, wantShape) || !reflect.DeepEqual(b.Data, a.Data) {
				t.Errorf("compress=%v %s: got %v %v, want %v %v", compress, name, b.Shape, b.Data, wantShape, a.Data)
			}
		}
		if got := out["U"].Descr; got != "<U10" {
			t.Errorf("unicode descr %q, want <U10", got)
		}
		// Members are aligned as numpy writes them.
		zr, err := zip.OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range zr.File {
			wantMethod := zip.Store
			if compress {
				wantMethod = zip.Deflate
			}
			if m.Method != wantMethod {
				t.Errorf("%s: method %d", m.Name, m.Method)
			}
		}
		zr.Close()
	}
}

func TestConversions(t *testing.T) {
	a := &Array{Data: []int8{-1, 2}}
	if v, err := a.Int64s(); err != nil || !reflect.DeepEqual(v, []int64{-1, 2}) {
		t.Errorf("Int64s: %v %v", v, err)
	}
	if v, err := a.Float32s(); err != nil || !reflect.DeepEqual(v, []float32{-1, 2}) {
		t.Errorf("Float32s: %v %v", v, err)
	}
	if _, err := (&Array{Data: []float32{1}, Descr: "<f4"}).Int64s(); err == nil || !strings.Contains(err.Error(), "<f4") {
		t.Errorf("float as int: %v", err)
	}
	if _, err := (&Array{Data: []uint64{1 << 63}}).Int64s(); err == nil {
		t.Error("uint64 overflow accepted")
	}
	if _, err := (&Array{Data: []string{"a"}}).Float32s(); err == nil {
		t.Error("string as float accepted")
	}
	if !(&Array{Data: []bool{}}).IsInteger() || (&Array{Data: []float64{}}).IsInteger() {
		t.Error("IsInteger wrong")
	}
}

func TestVersionsAndByteOrder(t *testing.T) {
	le := []byte{1, 0, 0, 0, 2, 0, 0, 0}
	be := []byte{0, 0, 0, 1, 0, 0, 0, 2}
	hdr := func(descr string) string {
		return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (2,), }"
	}
	members := map[string][]byte{
		"v1":   rawNPY(1, hdr("<i4"), le),
		"v2":   rawNPY(2, hdr("<i4"), le),
		"v3":   rawNPY(3, "{'shape': (2L,), 'fortran_order': False, 'descr': \"<i4\"}", le),
		"big":  rawNPY(1, hdr(">i4"), be),
		"bigU": rawNPY(1, "{'descr': '>U2', 'fortran_order': False, 'shape': (1,), }", []byte{0, 0, 0, 'h', 0, 0, 0, 'i'}),
		"bool": rawNPY(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", []byte{0, 1, 7}),
	}
	for _, method := range []uint16{zip.Store, zip.Deflate} {
		f, err := openBytes(t, zipOf(t, method, members))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"v1", "v2", "v3", "big"} {
			a, err := f.Read(name)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !reflect.DeepEqual(a.Data, []int32{1, 2}) {
				t.Errorf("%s: got %v", name, a.Data)
			}
		}
		if a, err := f.Read("bigU"); err != nil || !reflect.DeepEqual(a.Data, []string{"hi"}) {
			t.Errorf("bigU: %v %v", a, err)
		}
		if a, err := f.Read("bool"); err != nil || !reflect.DeepEqual(a.Data, []bool{false, true, true}) {
			t.Errorf("bool: %v %v", a, err)
		}
	}
}

func TestMalformedArrays(t *testing.T) {
	h := func(descr, shape string) string {
		return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }"
	}
	four := make([]byte, 8)
	cases := []struct {
		name, want  string
		member      []byte
		unsupported bool
	}{
		{"fortran", "Fortran", rawNPY(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 2), }", four), true},
		{"magic", "bad magic", append([]byte("\x93NUMPZ\x01\x00"), four...), false},
		{"version", "version 4.0", rawNPY(4, h("<i4", "(2,)"), four), true},
		{"short data", "needs 12 data bytes, the member holds 8", nil, false},
		{"long data", "needs 4 data bytes, the member holds 8", rawNPY(1, h("<i4", "(1,)"), four), false},
		{"object", "pickled", rawNPY(1, h("|O", "(1,)"), four), true},
		{"complex", "unsupported", rawNPY(1, h("<c8", "(1,)"), four), true},
		{"half", "float32 and float64", rawNPY(1, h("<f2", "(4,)"), four), true},
		{"structured", "structured", rawNPY(1, "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (2,), }", four), true},
		{"no shape", "'shape'", rawNPY(1, "{'descr': '<i4', 'fortran_order': False}", four), false},
		{"extra key", "unexpected key", rawNPY(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), 'x': True}", four), false},
		{"not a dict", "expected '{'", rawNPY(1, "descr=<i4", four), false},
		{"bad shape", "expected a dimension", rawNPY(1, h("<i4", "(-2,)"), four), false},
		{"huge shape", "too many elements", rawNPY(1, h("<i4", "(1000000000000, 1000000000000)"), four), false},
		{"bad order", "byte order", rawNPY(1, h("|i4", "(2,)"), four), false},
		{"header cut", "truncated", rawNPY(1, h("<i4", "(2,)"), nil)[:30], false},
		{"preamble cut", "truncated", []byte("\x93NU"), false},
		{"bad utf32", "invalid code point", rawNPY(1, h("<U1", "(2,)"), []byte{0, 0, 0x11, 0, 'a', 0, 0, 0}), false},
	}
	// "short data" needs a shape that wants more than the 8 bytes given.
	cases[3].member = rawNPY(1, h("<i4", "(3,)"), four)
	members := map[string][]byte{}
	for _, c := range cases {
		members[c.name] = c.member
	}
	f, err := openBytes(t, zipOf(t, zip.Deflate, members))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		_, err := f.Read(c.name)
		if err == nil {
			t.Errorf("%s: read without error", c.name)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) || !strings.Contains(msg, "test.npz") || !strings.Contains(msg, c.name) {
			t.Errorf("%s: error %q, want file, array and %q", c.name, msg, c.want)
		}
		if errors.Is(err, ErrUnsupported) != c.unsupported {
			t.Errorf("%s: errors.Is(ErrUnsupported) = %v", c.name, !c.unsupported)
		}
	}
	if _, err := f.Read("nothere"); err == nil || !strings.Contains(err.Error(), "no array \"nothere\"") {
		t.Errorf("missing array: %v", err)
	}
}

func TestMalformedArchives(t *testing.T) {
	good := zipOf(t, zip.Store, map[string][]byte{"a": rawNPY(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (64,), }", make([]byte, 256))})
	if _, err := openBytes(t, good[:len(good)/2]); err == nil || !strings.Contains(err.Error(), "not a valid .npz") {
		t.Errorf("cut archive: %v", err)
	}
	if _, err := openBytes(t, []byte("hello")); err == nil || !strings.Contains(err.Error(), "test.npz") {
		t.Errorf("not a zip: %v", err)
	}
	// Corrupt a data byte of a stored member: the CRC check must catch it.
	bad := bytes.Clone(good)
	i := bytes.Index(bad, []byte("\n")) + 5
	bad[i] ^= 0xff
	f, err := openBytes(t, bad)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Read("a"); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("corrupt member: %v", err)
	}
	// A directory entry claiming a huge member must be refused before any
	// allocation.
	huge := bytes.Clone(good)
	cd := bytes.LastIndex(huge, []byte("PK\x01\x02"))
	binary.LittleEndian.PutUint32(huge[cd+24:], 0xfffffff0) // uncompressed size
	if f, err := openBytes(t, huge); err == nil {
		if _, err := f.Read("a"); err == nil {
			t.Error("member with a false size read without error")
		}
	}
	if _, err := Open(filepath.Join(t.TempDir(), "none.npz")); err == nil || !strings.Contains(err.Error(), "none.npz") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Open(t.TempDir()); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("directory: %v", err)
	}
}

func TestWriteErrors(t *testing.T) {
	dir := t.TempDir()
	for name, arrays := range map[string]map[string]*Array{
		"shape":    {"a": {Shape: []int{2, 2}, Data: []int32{1, 2, 3}}},
		"type":     {"a": {Data: []complex64{1}}},
		"name":     {"a/b": {Data: []int32{1}}},
		"nil":      {"a": nil},
		"utf8":     {"a": {Data: []string{"\xff"}}},
		"negative": {"a": {Shape: []int{-1}, Data: []int32{}}},
	} {
		path := filepath.Join(dir, name+".npz")
		if err := Write(path, arrays); err == nil {
			t.Errorf("%s: written without error", name)
		}
		if _, err := os.Stat(path); err == nil {
			t.Errorf("%s: failed write left a file", name)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("temporary files left: %v", entries)
	}
}

func TestHeaderLayout(t *testing.T) {
	shape := make([]int, 32)
	for i := range shape {
		shape[i] = 1
	}
	var buf bytes.Buffer
	if err := EncodeNPY(&buf, &Array{Shape: shape, Data: []int32{7}}); err != nil {
		t.Fatal(err)
	}
	if buf.Bytes()[6] != 1 {
		t.Fatalf("short header written as version %d", buf.Bytes()[6])
	}
	a, _, err := readNPYHeader(bytes.NewReader(buf.Bytes()))
	if err != nil || len(a.shape) != 32 {
		t.Fatalf("%v %v", a, err)
	}
	if buf.Len()%64 != 4 {
		t.Errorf("data does not start at a multiple of 64 (total %d)", buf.Len())
	}
}
