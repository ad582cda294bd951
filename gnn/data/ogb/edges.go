package ogb

import (
	"fmt"
	"io/fs"
	"math"
	"os"
	"sort"
	"strings"
	"unsafe"

	"github.com/gnnscope/gnnscope/gnn/data"
)

// maxGzipRatio bounds how far a gzip file can expand: deflate produces at
// most about 1032 bytes per compressed byte.
const maxGzipRatio = 1032

// maxMultiplicity bounds the edge lines of an OGB edge file on n nodes to
// maxMultiplicity * n(n+1)/2, that is 64 copies of every unordered pair of
// nodes, self-loops included. A simple graph lists each pair once or twice;
// multigraphs exist, so duplicates are accepted, but more lines than this
// can only be repetition (a small gzip that expands to a huge file), and
// the file is refused before the rest of it is decompressed.
const maxMultiplicity = 64

// minCompact is the smallest edge list that is ever compacted.
const minCompact = 1 << 16

// maxTextSize returns an upper bound on the decompressed size of f: its
// size, times maxGzipRatio when it is gzipped.
func maxTextSize(f textFile) int64 {
	fi, err := os.Stat(f.path)
	if err != nil {
		return math.MaxInt64
	}
	size := fi.Size()
	if !strings.HasSuffix(f.path, ".gz") {
		return size
	}
	if size > math.MaxInt64/maxGzipRatio {
		return math.MaxInt64
	}
	return size * maxGzipRatio
}

// growChecked returns s with room for extra more elements. When it must
// reallocate, it first checks the new array (twice the old capacity, or
// what is needed if more) against limit with data.CheckAlloc.
func growChecked[T any](s []T, extra int, what string, limit int64) ([]T, error) {
	need := len(s) + extra
	if need <= cap(s) {
		return s, nil
	}
	newCap := max(need, 2*cap(s))
	var zero T
	if err := data.CheckAlloc(what, int64(newCap)*int64(unsafe.Sizeof(zero)), limit); err != nil {
		return s, err
	}
	return append(make([]T, 0, newCap), s...), nil
}

// edgeList gathers the edges of an edge file on n nodes in bounded memory.
// The graph built from it is symmetric without duplicates or self-loops,
// so whenever the list outgrows what a simple graph on n nodes can hold it
// is compacted: pairs ordered, self-loops and duplicates dropped. Growth
// beyond that is checked against the available memory before it happens.
type edgeList struct {
	n         int
	src, dst  []int32
	read      int64 // edge lines read so far
	maxRead   int64 // maxMultiplicity times the unordered pairs
	compactAt int64 // compact when the list holds more edges than this
	memLimit  int64 // for data.CheckAlloc; 0: the available memory
}

func newEdgeList(n int) *edgeList {
	pairs := int64(n) * int64(n+1) / 2
	l := &edgeList{n: n, maxRead: math.MaxInt64, compactAt: max(2*pairs, minCompact)}
	if pairs <= math.MaxInt64/maxMultiplicity {
		l.maxRead = pairs * maxMultiplicity
	}
	return l
}

// presize reserves room for hint edges (a count read from the dataset,
// so only a hint): at most what the file can hold and what the list may
// reach, and nothing when that much memory is not available.
func (l *edgeList) presize(hint int64, f textFile) {
	hint = min(hint, maxPresize, maxTextSize(f)/4, l.maxRead, l.compactAt) // "0,1\n" is 4 bytes
	if hint <= 0 || data.CheckAlloc("edges", 8*hint, 0) != nil {
		return
	}
	l.src, l.dst = make([]int32, 0, hint), make([]int32, 0, hint)
}

// add appends a parsed chunk of edges.
func (l *edgeList) add(c edgeChunk) error {
	k := int64(len(c.src))
	l.read += k
	if l.read > l.maxRead {
		return fmt.Errorf("more than %d edge lines for %d nodes (%d times every pair of nodes): refused as repetition, not a graph",
			l.maxRead, l.n, maxMultiplicity)
	}
	need := int64(len(l.src)) + k
	if need > l.compactAt {
		l.compact()
		need = int64(len(l.src)) + k
	}
	if need > int64(cap(l.src)) {
		newCap := max(need, 2*int64(cap(l.src)))
		if l.compactAt > need {
			newCap = min(newCap, l.compactAt+k)
		}
		what := fmt.Sprintf("the edge list (%d edges read so far)", l.read)
		if err := data.CheckAlloc(what, 8*newCap, l.memLimit); err != nil {
			return err
		}
		l.src = append(make([]int32, 0, newCap), l.src...)
		l.dst = append(make([]int32, 0, newCap), l.dst...)
	}
	l.src = append(l.src, c.src...)
	l.dst = append(l.dst, c.dst...)
	return nil
}

// compact orders every pair (smaller id first), sorts the list and drops
// self-loops and duplicates, in place.
func (l *edgeList) compact() {
	p := edgePairs{l.src, l.dst}
	for i, s := range p.src {
		if d := p.dst[i]; d < s {
			p.src[i], p.dst[i] = d, s
		}
	}
	sort.Sort(p)
	out := 0
	for i := range p.src {
		s, d := p.src[i], p.dst[i]
		if s == d || (out > 0 && s == p.src[out-1] && d == p.dst[out-1]) {
			continue
		}
		p.src[out], p.dst[out] = s, d
		out++
	}
	l.src, l.dst = l.src[:out], l.dst[:out]
}

// edgePairs sorts two parallel id slices by (src, dst).
type edgePairs struct{ src, dst []int32 }

func (p edgePairs) Len() int { return len(p.src) }
func (p edgePairs) Less(i, j int) bool {
	return p.src[i] < p.src[j] || (p.src[i] == p.src[j] && p.dst[i] < p.dst[j])
}
func (p edgePairs) Swap(i, j int) {
	p.src[i], p.src[j] = p.src[j], p.src[i]
	p.dst[i], p.dst[j] = p.dst[j], p.dst[i]
}

type edgeChunk struct{ src, dst []int32 }

// readEdges reads the "src,dst" lines, checking ids against n; hint (if
// positive) is the edge count that the dataset declares.
func (l *loader) readEdges(f textFile, n int, hint int64) (src, dst []int32, err error) {
	if f.path == "" {
		return nil, nil, fs.ErrNotExist
	}
	list := newEdgeList(n)
	list.presize(hint, f)
	err = parseFile(f, l.workers, l.progress("read edges"), func(text []byte, first int64) (edgeChunk, error) {
		return parseEdges(text, first, n)
	}, list.add)
	return list.src, list.dst, err
}

// parseEdges parses "src,dst" lines, the first one being line first.
func parseEdges(text []byte, first int64, n int) (edgeChunk, error) {
	est := len(text) / 12
	out := edgeChunk{src: make([]int32, 0, est), dst: make([]int32, 0, est)}
	for ln := first; len(text) > 0; ln++ {
		var line []byte
		line, text = nextLine(text)
		if blank(line) {
			continue
		}
		i := indexComma(line)
		if i < 0 {
			return out, &lineError{ln, fmt.Sprintf("%s is not a \"src,dst\" pair", quote(line))}
		}
		a, errA := parseInt(line[:i])
		b, errB := parseInt(line[i+1:])
		if errA != nil || errB != nil {
			return out, &lineError{ln, fmt.Sprintf("bad node id in %s", quote(line))}
		}
		s, okA := checkID(a, n)
		d, okB := checkID(b, n)
		if !okA || !okB {
			bad := a
			if okA {
				bad = b
			}
			return out, &lineError{ln, fmt.Sprintf("node id %d out of range [0, %d)", bad, n)}
		}
		out.src = append(out.src, s)
		out.dst = append(out.dst, d)
	}
	return out, nil
}
