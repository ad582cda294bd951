package data

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"github.com/gnnscope/gnnscope/gnn/graph"
)

// The dataset cache file (extension .gsd) stores a whole Dataset so that it
// reopens without parsing: Load maps the file into memory and the Dataset's
// slices point straight into the mapping.
//
// Layout, all integers little-endian:
//
//	offset  size  field
//	0       8     magic "GNNSGSD\x00"
//	8       4     version (CacheVersion)
//	12      4     header size (256)
//	16      8     flags (bit 0: a split follows)
//	24      8     nodes N
//	32      8     stored edges E
//	40      8     features F
//	48      8     classes
//	56      8     name length in bytes
//	64      8     train length
//	72      8     valid length
//	80      8     test length
//	88      8     total file size in bytes
//	96      156   reserved, zero
//	252     4     CRC-32C of bytes [0, 252)
//
// The header is followed by these sections, each starting at a multiple of
// 64 bytes (zero padding in between): name (UTF-8), indptr (N+1 int64),
// indices (E int32), features (N*F float32), labels (N int32), then train,
// valid and test node ids (int32). The file ends with the last section.
const (
	// CacheExt is the file extension of dataset cache files.
	CacheExt = ".gsd"
	// CacheVersion is the cache format version this build writes and reads.
	CacheVersion = 1
	// CacheMagic is the first 8 bytes of every cache file.
	CacheMagic = "GNNSGSD\x00"

	cacheMagic      = CacheMagic
	cacheHeaderSize = 256
	cacheAlign      = 64
	cacheCRCOffset  = 252
	cacheMaxName    = 1 << 16
	cacheFlagSplit  = 1

	numSections = 8 // name, indptr, indices, x, y, train, valid, test
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// cacheHeader is the decoded fixed header.
type cacheHeader struct {
	version     uint32
	flags       uint64
	nodes       uint64
	edges       uint64
	features    uint64
	classes     uint64
	nameLen     uint64
	train       uint64
	valid       uint64
	test        uint64
	fileSize    uint64
	sectionOffs [numSections]uint64
}

func (h *cacheHeader) encode() []byte {
	b := make([]byte, cacheHeaderSize)
	copy(b, cacheMagic)
	le := binary.LittleEndian
	le.PutUint32(b[8:], h.version)
	le.PutUint32(b[12:], cacheHeaderSize)
	for i, v := range []uint64{h.flags, h.nodes, h.edges, h.features, h.classes, h.nameLen, h.train, h.valid, h.test, h.fileSize} {
		le.PutUint64(b[16+8*i:], v)
	}
	le.PutUint32(b[cacheCRCOffset:], crc32.Checksum(b[:cacheCRCOffset], castagnoli))
	return b
}

// decodeCacheHeader checks the magic, version and checksum, then computes
// and checks the section layout against the sizes in the header.
func decodeCacheHeader(b []byte) (*cacheHeader, error) {
	if len(b) < cacheHeaderSize {
		return nil, fmt.Errorf("file is %d bytes, too small for a dataset cache header (%d bytes)", len(b), cacheHeaderSize)
	}
	if string(b[:8]) != cacheMagic {
		return nil, errors.New("not a gnnscope dataset cache (bad magic)")
	}
	le := binary.LittleEndian
	h := &cacheHeader{version: le.Uint32(b[8:])}
	if h.version != CacheVersion {
		return nil, fmt.Errorf("cache format version %d, this build reads version %d (delete the file to regenerate it)", h.version, CacheVersion)
	}
	if want, got := crc32.Checksum(b[:cacheCRCOffset], castagnoli), le.Uint32(b[cacheCRCOffset:]); want != got {
		return nil, fmt.Errorf("header checksum mismatch (stored %08x, computed %08x): the file is damaged", got, want)
	}
	if hs := le.Uint32(b[12:]); hs != cacheHeaderSize {
		return nil, fmt.Errorf("header size %d, want %d", hs, cacheHeaderSize)
	}
	fields := []*uint64{&h.flags, &h.nodes, &h.edges, &h.features, &h.classes, &h.nameLen, &h.train, &h.valid, &h.test, &h.fileSize}
	for i, f := range fields {
		*f = le.Uint64(b[16+8*i:])
	}
	if h.flags&^cacheFlagSplit != 0 {
		return nil, fmt.Errorf("unknown header flags %#x", h.flags)
	}
	if h.flags&cacheFlagSplit == 0 && h.train+h.valid+h.test != 0 {
		return nil, errors.New("header has split sizes but no split flag")
	}
	total, err := h.layout()
	if err != nil {
		return nil, err
	}
	if total != h.fileSize {
		return nil, fmt.Errorf("header: sizes add up to %d bytes but the header records %d", total, h.fileSize)
	}
	return h, nil
}

// layout fills sectionOffs from the sizes and returns the file size they
// imply. Every size is bounded so that no product overflows.
func (h *cacheHeader) layout() (uint64, error) {
	const maxCount = 1 << 40
	switch {
	case h.nodes > math.MaxInt32:
		return 0, fmt.Errorf("header: %d nodes exceeds the int32 index range", h.nodes)
	case h.edges > maxCount || h.features > maxCount || h.train > maxCount || h.valid > maxCount || h.test > maxCount:
		return 0, errors.New("header: implausible sizes")
	case h.classes > h.nodes:
		return 0, fmt.Errorf("header: %d classes for %d nodes (there cannot be more classes than nodes)", h.classes, h.nodes)
	case h.nameLen > cacheMaxName:
		return 0, fmt.Errorf("header: name of %d bytes", h.nameLen)
	}
	hi, xlen := bits.Mul64(h.nodes, h.features)
	if hi != 0 || xlen > maxCount {
		return 0, fmt.Errorf("header: %d nodes × %d features is implausible", h.nodes, h.features)
	}
	sizes := [numSections]uint64{h.nameLen, 8 * (h.nodes + 1), 4 * h.edges, 4 * xlen, 4 * h.nodes, 4 * h.train, 4 * h.valid, 4 * h.test}
	off := uint64(cacheHeaderSize)
	for i, s := range sizes {
		off = alignUp(off)
		h.sectionOffs[i] = off
		off += s
	}
	return off, nil
}

func alignUp(off uint64) uint64 { return (off + cacheAlign - 1) &^ (cacheAlign - 1) }

func littleEndianHost() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// byteView returns the bytes of s without copying.
func byteView[T int32 | int64 | float32](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(s[0])))
}

// sliceAt returns n values of type T starting at byte offset off of mem,
// without copying. The caller has checked the bounds and alignment.
func sliceAt[T int32 | int64 | float32](mem []byte, off, n uint64) []T {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&mem[off])), n)
}

// Save writes d to path in the cache format. It writes a temporary file in
// the same directory, flushes it to disk and renames it over path, so a crash
// never leaves a partial file under the final name. A Dataset mapped from the
// old file stays valid. The file is private to its owner (mode 0600, less
// if the umask says so): a dataset may hold data that others must not read.
func Save(path string, d *Dataset) (err error) {
	if !littleEndianHost() {
		return fmt.Errorf("save %s: the dataset cache needs a little-endian machine", path)
	}
	if err := d.Validate(); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	if len(d.Name) > cacheMaxName {
		return fmt.Errorf("save %s: dataset name of %d bytes is too long", path, len(d.Name))
	}
	h := &cacheHeader{
		version:  CacheVersion,
		nodes:    uint64(d.Graph.N),
		edges:    uint64(len(d.Graph.Indices)),
		features: uint64(d.NumFeatures),
		classes:  uint64(d.NumClasses),
		nameLen:  uint64(len(d.Name)),
	}
	var train, valid, test []int32
	if d.Split != nil {
		h.flags |= cacheFlagSplit
		train, valid, test = d.Split.Train, d.Split.Valid, d.Split.Test
		h.train, h.valid, h.test = uint64(len(train)), uint64(len(valid)), uint64(len(test))
	}
	if h.fileSize, err = h.layout(); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}

	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriterSize(tmp, 1<<20)
	if _, err := w.Write(h.encode()); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	sections := [numSections][]byte{
		[]byte(d.Name), byteView(d.Graph.Indptr), byteView(d.Graph.Indices), byteView(d.X),
		byteView(d.Y), byteView(train), byteView(valid), byteView(test),
	}
	pos := uint64(cacheHeaderSize)
	var zeros [cacheAlign]byte
	for i, s := range sections {
		if pad := h.sectionOffs[i] - pos; pad > 0 {
			if _, err := w.Write(zeros[:pad]); err != nil {
				return fmt.Errorf("save %s: %w", path, err)
			}
		}
		if _, err := w.Write(s); err != nil {
			return fmt.Errorf("save %s: %w", path, err)
		}
		pos = h.sectionOffs[i] + uint64(len(s))
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	if dir, err := os.Open(filepath.Dir(path)); err == nil { // make the rename durable; best effort
		dir.Sync()
		dir.Close()
	}
	return nil
}

// mappings remembers the memory behind each loaded Dataset, and the file it
// came from, for Release and Guard.
var mappings struct {
	sync.Mutex
	m map[*Dataset]loaded
}

// loaded is the memory behind a Dataset returned by Load.
type loaded struct {
	m    mapping
	path string
	// mapped is false when the file was read into the heap: then there is
	// nothing to unmap.
	mapped bool
}

// release unmaps the memory of l if it is a mapping.
func (l loaded) release() error {
	if !l.mapped {
		return nil
	}
	return l.m.unmap()
}

// Load opens a cache file written by Save. A file of 32 MiB or more is
// memory-mapped read-only and the Dataset's slices (graph, features,
// labels, split) point into the mapping without copying, so even very large
// datasets open in a fraction of a second and share the operating system's
// page cache between processes; a smaller file is read into memory.
//
// Those slices are read-only: writing to them may crash the program. Clone
// a slice before changing it. The mapping lives until Release is called on
// the Dataset (or the process exits). A mapped file truncated while in use
// makes reads of the lost pages fault: wrap such reads in Guard to get an
// error instead.
//
// Load opens only regular files (a FIFO or a device is refused, without
// blocking), checks the header (magic, version, checksum, the section
// layout against the file size) before mapping anything, and validates the
// graph, labels and split; any inconsistency is an error naming the file.
func Load(path string) (*Dataset, error) { return load(path, readBelow) }

// Map is Load that maps the file whatever its size (Load reads small files
// into memory instead).
func Map(path string) (*Dataset, error) { return load(path, 0) }

// load is Load with the size under which the file is read, not mapped.
func load(path string, readLimit int64) (*Dataset, error) {
	if !littleEndianHost() {
		return nil, fmt.Errorf("load %s: the dataset cache needs a little-endian machine", path)
	}
	f, fi, err := openRegular(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	defer f.Close()
	size := fi.Size()
	hb := make([]byte, min(size, cacheHeaderSize))
	if _, err := f.ReadAt(hb, 0); err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	h, err := decodeCacheHeader(hb)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	if uint64(size) != h.fileSize {
		what := "truncated"
		if uint64(size) > h.fileSize {
			what = "trailing bytes"
		}
		return nil, fmt.Errorf("load %s: file is %d bytes but its header says %d (%s)", path, size, h.fileSize, what)
	}
	l := loaded{path: path, mapped: size >= readLimit}
	if l.mapped {
		l.m, err = mapFile(f, size)
	} else {
		l.m.mem, err = readWhole(f, size)
	}
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	var d *Dataset
	if err := guardFault(path, func() error {
		d = h.dataset(l.m.bytes())
		return d.Validate()
	}); err != nil {
		l.release()
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	mappings.Lock()
	if mappings.m == nil {
		mappings.m = make(map[*Dataset]loaded)
	}
	mappings.m[d] = l
	mappings.Unlock()
	return d, nil
}

// dataset returns the Dataset whose slices point into mem, the whole file
// that h heads. The name is copied out, so this reads mem.
func (h *cacheHeader) dataset(mem []byte) *Dataset {
	off := h.sectionOffs
	d := &Dataset{
		Name: string(mem[off[0] : off[0]+h.nameLen]),
		Graph: &graph.CSR{
			N:       int(h.nodes),
			Indptr:  sliceAt[int64](mem, off[1], h.nodes+1),
			Indices: sliceAt[int32](mem, off[2], h.edges),
		},
		X:           sliceAt[float32](mem, off[3], h.nodes*h.features),
		NumFeatures: int(h.features),
		Y:           sliceAt[int32](mem, off[4], h.nodes),
		NumClasses:  int(h.classes),
	}
	if h.flags&cacheFlagSplit != 0 {
		d.Split = &Split{
			Train: sliceAt[int32](mem, off[5], h.train),
			Valid: sliceAt[int32](mem, off[6], h.valid),
			Test:  sliceAt[int32](mem, off[7], h.test),
		}
	}
	return d
}

// Release unmaps the memory behind a Dataset returned by Load (a file read
// into memory is left to the garbage collector). Afterwards
// none of d's slices (nor any slice taken from them) may be used. It does
// nothing for a Dataset that did not come from Load or was already released.
func Release(d *Dataset) error {
	mappings.Lock()
	l, ok := mappings.m[d]
	delete(mappings.m, d)
	mappings.Unlock()
	if !ok {
		return nil
	}
	return l.release()
}
