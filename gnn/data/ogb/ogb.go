package ogb

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/gnnscope/gnnscope/gnn/data"
)

// Options tune Load.
type Options struct {
	// Split names the folder under split/ to use when the dataset ships
	// several; empty picks the only one.
	Split string
	// Workers is the number of parsing goroutines; 0 uses GOMAXPROCS.
	Workers int
	// Progress, if not nil, is called with a stage name and the fraction of
	// that stage done, from the goroutine that called Load.
	Progress func(stage string, frac float64)
}

// Root returns the dataset root for dir, which may be the root itself
// (holding raw/ and split/) or its raw/ folder. It fails when dir does not
// look like an OGB node-property dataset.
func Root(dir string) (string, error) {
	if isFile(filepath.Join(dir, "raw", "edge.csv.gz")) || isFile(filepath.Join(dir, "raw", "edge.csv")) {
		return dir, nil
	}
	if isFile(filepath.Join(dir, "edge.csv.gz")) || isFile(filepath.Join(dir, "edge.csv")) {
		return filepath.Dir(filepath.Clean(dir)), nil
	}
	if isDir(filepath.Join(dir, "raw")) {
		return "", fmt.Errorf("%s: raw/ has no edge.csv.gz (heterogeneous OGB datasets such as ogbn-mag, and the binary layout of ogbn-papers100M, are not supported)", dir)
	}
	return "", fmt.Errorf("%s: not an OGB dataset folder (expected raw/edge.csv.gz, raw/node-feat.csv.gz, raw/node-label.csv.gz and split/<name>/)", dir)
}

func isFile(p string) bool { fi, err := os.Stat(p); return err == nil && fi.Mode().IsRegular() }
func isDir(p string) bool  { fi, err := os.Stat(p); return err == nil && fi.IsDir() }

// Load reads an OGB node-property-prediction dataset from its raw CSV files:
//
//	raw/edge.csv.gz          one "src,dst" pair per line
//	raw/node-feat.csv.gz     one row of comma-separated floats per node
//	raw/node-label.csv.gz    one label per node; "nan" or empty = unlabeled;
//	                         with several columns the first one is used
//	raw/num-node-list.csv.gz the node count (optional; else the feature rows)
//	split/<name>/{train,valid,test}.csv.gz  one node id per line
//
// dir is the dataset root or its raw/ folder. Files may also be
// uncompressed (.csv). The graph is made symmetric, without duplicate
// entries or self-loops. Errors name the file and, for content errors, the
// line. Lines longer than MaxLineBytes are refused; duplicate edges are
// dropped while reading, so that the edge list never holds much more than
// a simple graph on the node count, and an edge file listing more than 64
// times every pair of nodes is refused as repetition.
func Load(dir string, opt Options) (*data.Dataset, error) {
	root, err := Root(dir)
	if err != nil {
		return nil, err
	}
	l := &loader{root: root, opt: opt, workers: opt.Workers}
	if l.workers <= 0 {
		l.workers = runtime.GOMAXPROCS(0)
	}
	d, err := l.load()
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", root, err)
	}
	return d, nil
}

type loader struct {
	root    string
	opt     Options
	workers int
}

// file locates raw/<base>.csv.gz (or .csv); ok is false when neither exists.
func (l *loader) file(sub, base string) (textFile, bool) {
	for _, ext := range []string{".csv.gz", ".csv"} {
		rel := filepath.ToSlash(filepath.Join(sub, base+ext))
		p := filepath.Join(l.root, sub, base+ext)
		if isFile(p) {
			return textFile{name: rel, path: p}, true
		}
	}
	return textFile{name: filepath.ToSlash(filepath.Join(sub, base+".csv.gz"))}, false
}

func (l *loader) progress(stage string) func(float64) {
	if l.opt.Progress == nil {
		return nil
	}
	return func(f float64) { l.opt.Progress(stage, f) }
}

// wrap adds the file name to an error.
func wrap(f textFile, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: missing", f.name)
	}
	return fmt.Errorf("%s: %w", f.name, err)
}

func (l *loader) load() (*data.Dataset, error) {
	n := -1
	if f, ok := l.file("raw", "num-node-list"); ok {
		var err error
		if n, err = l.readNumNodes(f); err != nil {
			return nil, wrap(f, err)
		}
	}
	featFile, ok := l.file("raw", "node-feat")
	if !ok {
		return nil, fmt.Errorf("%s: missing (datasets without node features, such as ogbn-proteins, are not supported)", featFile.name)
	}
	x, nf, rows, err := l.readFeatures(featFile, n)
	if err != nil {
		return nil, wrap(featFile, err)
	}
	if n < 0 {
		n = rows
	} else if rows != n {
		return nil, fmt.Errorf("%s has %d rows but raw/num-node-list says %d nodes", featFile.name, rows, n)
	}
	labelFile, ok := l.file("raw", "node-label")
	if !ok {
		return nil, fmt.Errorf("%s: missing (gnnscope needs node labels)", labelFile.name)
	}
	y, classes, err := l.readLabels(labelFile, n)
	if err != nil {
		return nil, wrap(labelFile, err)
	}
	edgeFile, _ := l.file("raw", "edge")
	numEdges := int64(-1)
	if f, ok := l.file("raw", "num-edge-list"); ok {
		if v, err := l.readNumNodes(f); err == nil { // only a capacity hint
			numEdges = int64(v)
		}
	}
	src, dst, err := l.readEdges(edgeFile, n, numEdges)
	if err != nil {
		return nil, wrap(edgeFile, err)
	}
	if l.opt.Progress != nil {
		l.opt.Progress("build graph", 0)
	}
	g := buildSymmetric(n, src, dst, l.workers)
	if l.opt.Progress != nil {
		l.opt.Progress("build graph", 1)
	}
	split, err := l.readSplit(n)
	if err != nil {
		return nil, err
	}
	d := &data.Dataset{
		Name:        filepath.Base(filepath.Clean(l.root)),
		Graph:       g,
		X:           x,
		NumFeatures: nf,
		Y:           y,
		NumClasses:  classes,
		Split:       split,
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return d, nil
}

// readNumNodes reads a one-line count file.
func (l *loader) readNumNodes(f textFile) (int, error) {
	var vals []int64
	err := parseFile(f, 1, nil, func(text []byte, first int64) ([]int64, error) {
		var out []int64
		for ln := first; len(text) > 0; ln++ {
			var line []byte
			line, text = nextLine(text)
			if blank(line) {
				continue
			}
			v, err := parseInt(line)
			if err != nil || v < 0 || v >= math.MaxInt32 {
				return nil, &lineError{ln, fmt.Sprintf("bad node count %s", quote(line))}
			}
			out = append(out, v)
		}
		return out, nil
	}, func(v []int64) error {
		if len(vals)+len(v) > 1 {
			return errors.New("lists several graphs; only single-graph node-property datasets are supported")
		}
		vals = append(vals, v...)
		return nil
	})
	if err != nil {
		return 0, err
	}
	if len(vals) == 0 {
		return 0, errors.New("empty")
	}
	return int(vals[0]), nil
}

// maxPresize bounds the capacity that a count file (raw/num-node-list,
// raw/num-edge-list) may reserve up front: 2^28 values (1 GiB of float32).
// The counts are hints read from the dataset; a corrupt one must not
// reserve memory without bound, and larger data simply grows past it.
const maxPresize = 1 << 28

type floatRows struct {
	vals       []float32
	rows, cols int
}

// readFeatures reads the feature matrix; n (if >= 0) presizes it.
func (l *loader) readFeatures(f textFile, n int) (x []float32, cols, rows int, err error) {
	cols = -1
	err = parseFile(f, l.workers, l.progress("read features"), func(text []byte, first int64) (floatRows, error) {
		out := floatRows{cols: -1}
		out.vals = make([]float32, 0, len(text)/8)
		for ln := first; len(text) > 0; ln++ {
			var line []byte
			line, text = nextLine(text)
			if blank(line) {
				if len(text) == 0 {
					break // a final line without content
				}
				return out, &lineError{ln, "empty line (every node needs a feature row)"}
			}
			k := 0
			for field := range splitComma(line) {
				v, err := parseFloat32(field)
				if err != nil {
					return out, &lineError{ln, fmt.Sprintf("bad number %s in column %d", quote(field), k+1)}
				}
				if v-v != 0 { // NaN or ±Inf
					return out, &lineError{ln, fmt.Sprintf("%v in column %d (features must be finite)", v, k+1)}
				}
				out.vals = append(out.vals, v)
				k++
			}
			if out.cols < 0 {
				out.cols = k
			} else if k != out.cols {
				return out, &lineError{ln, fmt.Sprintf("%d values, earlier rows have %d", k, out.cols)}
			}
			out.rows++
		}
		return out, nil
	}, func(c floatRows) error {
		if c.rows == 0 {
			return nil
		}
		if cols < 0 {
			cols = c.cols
			if n >= 0 {
				x = make([]float32, 0, min(n*cols, maxPresize, int(maxTextSize(f)/2))) // "0," is 2 bytes
			}
		} else if c.cols != cols {
			return &lineError{int64(rows) + 1, fmt.Sprintf("%d values, earlier rows have %d", c.cols, cols)}
		}
		if n >= 0 && rows+c.rows > n {
			return &lineError{int64(n) + 1, fmt.Sprintf("more feature rows than the %d nodes of raw/num-node-list", n)}
		}
		grown, err := growChecked(x, len(c.vals), "the feature matrix", 0)
		if err != nil {
			return err
		}
		x = append(grown, c.vals...)
		rows += c.rows
		return nil
	})
	if err != nil {
		return nil, 0, 0, err
	}
	if rows == 0 {
		return nil, 0, 0, errors.New("no feature rows")
	}
	return x, cols, rows, nil
}

// splitComma yields the comma-separated fields of line.
func splitComma(line []byte) func(yield func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for {
			i := indexComma(line)
			if i < 0 {
				yield(line)
				return
			}
			if !yield(line[:i]) {
				return
			}
			line = line[i+1:]
		}
	}
}

func indexComma(b []byte) int {
	for i, c := range b {
		if c == ',' {
			return i
		}
	}
	return -1
}

type labelChunk struct {
	y   []int32
	max int32
}

// readLabels reads one label per node; unlabeled nodes get -1.
func (l *loader) readLabels(f textFile, n int) ([]int32, int, error) {
	y := make([]int32, 0, n)
	maxLabel := int32(-1)
	err := parseFile(f, l.workers, l.progress("read labels"), func(text []byte, first int64) (labelChunk, error) {
		out := labelChunk{max: -1}
		for ln := first; len(text) > 0; ln++ {
			var line []byte
			line, text = nextLine(text)
			if len(text) == 0 && len(line) == 0 {
				break // the file's final newline
			}
			if i := indexComma(line); i >= 0 {
				line = line[:i] // several tasks: use the first
			}
			v, err := parseLabel(line)
			if err != nil {
				return out, &lineError{ln, fmt.Sprintf("bad label %s", quote(line))}
			}
			if int(v) >= n {
				return out, &lineError{ln, fmt.Sprintf("label %d, but a class id must be below the node count (%d)", v, n)}
			}
			out.y = append(out.y, v)
			out.max = max(out.max, v)
		}
		return out, nil
	}, func(c labelChunk) error {
		if len(y)+len(c.y) > n {
			return &lineError{int64(n) + 1, fmt.Sprintf("more labels than the %d nodes", n)}
		}
		y = append(y, c.y...)
		maxLabel = max(maxLabel, c.max)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if len(y) != n {
		return nil, 0, fmt.Errorf("%d labels for %d nodes", len(y), n)
	}
	if maxLabel < 0 {
		return nil, 0, errors.New("no node has a label")
	}
	return y, int(maxLabel) + 1, nil
}

// parseLabel reads an integer class; "nan", empty and negative values mean
// unlabeled (-1). Integral floats such as "3.0" are accepted.
func parseLabel(b []byte) (int32, error) {
	if blank(b) {
		return -1, nil
	}
	v, err := parseInt(b)
	if err != nil {
		f, ferr := parseFloat32(b)
		switch {
		case ferr != nil:
			return 0, ferr
		case f != f: // NaN
			return -1, nil
		case f != float32(int64(f)) || f > 1<<24:
			return 0, errBadNumber
		}
		v = int64(f)
	}
	if v < 0 {
		return -1, nil
	}
	if v >= math.MaxInt32 {
		return 0, errBadNumber
	}
	return int32(v), nil
}

// readSplit reads split/<name>/{train,valid,test}.csv.gz; nil when the
// dataset has no split folder.
func (l *loader) readSplit(n int) (*data.Split, error) {
	dir := filepath.Join(l.root, "split")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	name := l.opt.Split
	switch {
	case name != "" && !slices.Contains(names, name):
		return nil, fmt.Errorf("split/ has no split %q (available: %s)", name, strings.Join(names, ", "))
	case name == "" && len(names) == 0:
		return nil, nil
	case name == "" && len(names) > 1:
		return nil, fmt.Errorf("split/ holds several splits (%s); choose one", strings.Join(names, ", "))
	case name == "":
		name = names[0]
	}
	s := &data.Split{}
	for _, part := range []struct {
		base string
		dst  *[]int32
	}{{"train", &s.Train}, {"valid", &s.Valid}, {"test", &s.Test}} {
		f, ok := l.file(filepath.Join("split", name), part.base)
		if !ok {
			return nil, fmt.Errorf("%s: missing", f.name)
		}
		ids, err := l.readIDs(f, n)
		if err != nil {
			return nil, wrap(f, err)
		}
		*part.dst = ids
	}
	return s, nil
}

// readIDs reads one node id per line.
func (l *loader) readIDs(f textFile, n int) ([]int32, error) {
	var ids []int32
	err := parseFile(f, l.workers, l.progress("read split"), func(text []byte, first int64) ([]int32, error) {
		var out []int32
		for ln := first; len(text) > 0; ln++ {
			var line []byte
			line, text = nextLine(text)
			if blank(line) {
				continue
			}
			v, err := parseInt(line)
			if err != nil {
				return nil, &lineError{ln, fmt.Sprintf("bad node id %s", quote(line))}
			}
			id, ok := checkID(v, n)
			if !ok {
				return nil, &lineError{ln, fmt.Sprintf("node id %d out of range [0, %d)", v, n)}
			}
			out = append(out, id)
		}
		return out, nil
	}, func(c []int32) error {
		if len(ids)+len(c) > n {
			return fmt.Errorf("more node ids than the %d nodes", n)
		}
		ids = append(ids, c...)
		return nil
	})
	return ids, err
}
