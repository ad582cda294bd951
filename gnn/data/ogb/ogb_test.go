package ogb

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/rng"
)

// writeOGB writes files (relative path -> content) under a fresh dataset
// root named "ogbn_test"; names ending in .gz are gzipped.
func writeOGB(t testing.TB, files map[string]string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "ogbn_test")
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		b := []byte(content)
		if strings.HasSuffix(rel, ".gz") {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write(b)
			zw.Close()
			b = buf.Bytes()
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// smallOGB: 6 nodes. Edges 0-1 (twice, once reversed), 1-2, 2-2 (self-loop),
// 3-4; node 5 isolated. Node 2 unlabeled ("nan"), node 4 unlabeled (empty).
func smallOGB() map[string]string {
	return map[string]string{
		"raw/edge.csv.gz":          "0,1\n1,0\n1,2\n2,2\n3,4\n0,1\n",
		"raw/node-feat.csv.gz":     "0.5,-1,2e-3\n1,2,3\n-0.25,0,0\n7,8,9\n1.5,2.5,3.5\n0,0,1\n",
		"raw/node-label.csv.gz":    "0\n3\nnan\n1\n\n2\n",
		"raw/num-node-list.csv.gz": "6\n",
		"raw/num-edge-list.csv.gz": "6\n",
		"split/time/train.csv.gz":  "0\n1\n",
		"split/time/valid.csv.gz":  "3\n",
		"split/time/test.csv.gz":   "5\n4\n",
	}
}

func checkSmall(t *testing.T, dir string, opt Options) {
	t.Helper()
	d, err := Load(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "ogbn_test" || d.NumNodes() != 6 || d.NumFeatures != 3 || d.NumClasses != 4 {
		t.Fatalf("got %q %d nodes %d features %d classes", d.Name, d.NumNodes(), d.NumFeatures, d.NumClasses)
	}
	if want := []int64{0, 1, 3, 4, 5, 6, 6}; !slices.Equal(d.Graph.Indptr, want) {
		t.Errorf("indptr %v, want %v", d.Graph.Indptr, want)
	}
	if want := []int32{1, 0, 2, 1, 4, 3}; !slices.Equal(d.Graph.Indices, want) {
		t.Errorf("indices %v, want %v", d.Graph.Indices, want)
	}
	if d.X[2] != 0.002 || d.X[6] != -0.25 || d.X[17] != 1 {
		t.Errorf("features %v", d.X)
	}
	if want := []int32{0, 3, -1, 1, -1, 2}; !slices.Equal(d.Y, want) {
		t.Errorf("labels %v, want %v", d.Y, want)
	}
	if d.Split == nil || !slices.Equal(d.Split.Train, []int32{0, 1}) || !slices.Equal(d.Split.Valid, []int32{3}) || !slices.Equal(d.Split.Test, []int32{5, 4}) {
		t.Errorf("split %+v", d.Split)
	}
}

func TestLoad(t *testing.T) {
	root := writeOGB(t, smallOGB())
	checkSmall(t, root, Options{})
	checkSmall(t, filepath.Join(root, "raw"), Options{Workers: 3}) // pointing at raw/
}

func TestLoadVariants(t *testing.T) {
	// No count files, plain .csv, CRLF line endings, multi-column labels,
	// no final newline.
	files := map[string]string{}
	for k, v := range smallOGB() {
		if strings.Contains(k, "num-") {
			continue
		}
		k = strings.TrimSuffix(k, ".gz")
		files[k] = strings.ReplaceAll(v, "\n", "\r\n")
	}
	files["raw/node-label.csv"] = "0,1\n3,0\nnan,1\n1.0,0\n,\n2,5"
	checkSmall(t, writeOGB(t, files), Options{})
}

func TestLoadNoSplit(t *testing.T) {
	files := smallOGB()
	for k := range files {
		if strings.HasPrefix(k, "split/") {
			delete(files, k)
		}
	}
	d, err := Load(writeOGB(t, files), Options{})
	if err != nil || d.Split != nil {
		t.Fatalf("%v, split %v", err, d.Split)
	}
}

func TestLoadSeveralSplits(t *testing.T) {
	files := smallOGB()
	files["split/random/train.csv.gz"] = "2\n"
	files["split/random/valid.csv.gz"] = "3\n"
	files["split/random/test.csv.gz"] = "4\n"
	root := writeOGB(t, files)
	if _, err := Load(root, Options{}); err == nil || !strings.Contains(err.Error(), "several splits (random, time)") {
		t.Errorf("no choice: %v", err)
	}
	d, err := Load(root, Options{Split: "random"})
	if err != nil || !slices.Equal(d.Split.Train, []int32{2}) {
		t.Errorf("chosen split: %v %+v", err, d)
	}
	if _, err := Load(root, Options{Split: "species"}); err == nil || !strings.Contains(err.Error(), `no split "species" (available: random, time)`) {
		t.Errorf("unknown split: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(f map[string]string)
		want   string
	}{
		{"bad feature", func(f map[string]string) { f["raw/node-feat.csv.gz"] = "1,2,3\n4,x5,6\n" }, `raw/node-feat.csv.gz: line 2: bad number "x5" in column 2`},
		{"ragged features", func(f map[string]string) { f["raw/node-feat.csv.gz"] = "1,2,3\n4,5\n" }, "raw/node-feat.csv.gz: line 2: 2 values, earlier rows have 3"},
		{"feature rows", func(f map[string]string) { f["raw/node-feat.csv.gz"] = "1\n2\n" }, "has 2 rows but raw/num-node-list says 6 nodes"},
		{"empty feature line", func(f map[string]string) { f["raw/node-feat.csv.gz"] = "1\n\n2\n3\n4\n5\n" }, "line 2: empty line"},
		{"edge range", func(f map[string]string) { f["raw/edge.csv.gz"] = "0,1\n1,2\n5,6\n" }, "raw/edge.csv.gz: line 3: node id 6 out of range [0, 6)"},
		{"negative edge", func(f map[string]string) { f["raw/edge.csv.gz"] = "0,1\n-1,2\n" }, "line 2: node id -1 out of range"},
		{"bad edge", func(f map[string]string) { f["raw/edge.csv.gz"] = "0,1\n1;2\n" }, `raw/edge.csv.gz: line 2: "1;2" is not a "src,dst" pair`},
		{"edge header", func(f map[string]string) { f["raw/edge.csv.gz"] = "src,dst\n0,1\n" }, "line 1: bad node id"},
		{"label count", func(f map[string]string) { f["raw/node-label.csv.gz"] = "0\n1\n2\n" }, "raw/node-label.csv.gz: 3 labels for 6 nodes"},
		{"too many labels", func(f map[string]string) { f["raw/node-label.csv.gz"] = "0\n1\n2\n0\n1\n2\n0\n" }, "raw/node-label.csv.gz: line 7: more labels than the 6 nodes"},
		{"bad label", func(f map[string]string) { f["raw/node-label.csv.gz"] = "0\n1\n2.5\n0\n1\n2\n" }, `line 3: bad label "2.5"`},
		// A label of 2e9 made the class count 2e9 and killed every
		// per-class allocation downstream.
		{"label 2e9", func(f map[string]string) { f["raw/node-label.csv.gz"] = "0\n1\n2000000000\n0\n1\n2\n" },
			"raw/node-label.csv.gz: line 3: label 2000000000, but a class id must be below the node count (6)"},
		{"label = nodes", func(f map[string]string) { f["raw/node-label.csv.gz"] = "0\n1\n2\n0\n1\n6\n" }, "line 6: label 6, but"},
		{"label 2e9 float", func(f map[string]string) { f["raw/node-label.csv.gz"] = "0\n1\n2\n0\n1\n1e7\n" }, "line 6: label 10000000"},
		{"nan feature", func(f map[string]string) { f["raw/node-feat.csv.gz"] = "1,2,3\n4,5,6\n1,nan,3\n1,2,3\n1,2,3\n1,2,3\n" },
			"raw/node-feat.csv.gz: line 3: NaN in column 2 (features must be finite)"},
		{"inf feature", func(f map[string]string) { f["raw/node-feat.csv.gz"] = "1,2,3\n4,5,6\n1,2,3\n1,2,-inf\n1,2,3\n1,2,3\n" },
			"line 4: -Inf in column 3"},
		{"no labels", func(f map[string]string) { f["raw/node-label.csv.gz"] = "nan\nnan\nnan\nnan\nnan\nnan\n" }, "no node has a label"},
		{"missing labels", func(f map[string]string) { delete(f, "raw/node-label.csv.gz") }, "raw/node-label.csv.gz: missing"},
		{"missing features", func(f map[string]string) { delete(f, "raw/node-feat.csv.gz") }, "raw/node-feat.csv.gz: missing"},
		{"missing split part", func(f map[string]string) { delete(f, "split/time/valid.csv.gz") }, "split/time/valid.csv.gz: missing"},
		{"split range", func(f map[string]string) { f["split/time/test.csv.gz"] = "1\n9\n" }, "split/time/test.csv.gz: line 2: node id 9 out of range [0, 6)"},
		{"bad count", func(f map[string]string) { f["raw/num-node-list.csv.gz"] = "six\n" }, `raw/num-node-list.csv.gz: line 1: bad node count "six"`},
		{"several graphs", func(f map[string]string) { f["raw/num-node-list.csv.gz"] = "3\n3\n" }, "raw/num-node-list.csv.gz: lists several graphs"},
		{"split ids", func(f map[string]string) { f["split/time/train.csv.gz"] = strings.Repeat("0\n", 7) },
			"split/time/train.csv.gz: more node ids than the 6 nodes"},
		// Corrupt counts are hints for capacity: an absurd one is an error
		// about the rows, not a reservation of terabytes.
		{"absurd node count", func(f map[string]string) {
			f["raw/num-node-list.csv.gz"] = "2147483000\n"
			f["raw/num-edge-list.csv.gz"] = "17179869000\n"
		}, "has 6 rows but raw/num-node-list says 2147483000 nodes"},
	} {
		files := smallOGB()
		tc.change(files)
		root := writeOGB(t, files)
		_, err := Load(root, Options{Workers: 2})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), root) {
			t.Errorf("%s: error %v, want the folder and %q", tc.name, err, tc.want)
		}
	}
}

func TestLoadBadFiles(t *testing.T) {
	root := writeOGB(t, smallOGB())
	if err := os.WriteFile(filepath.Join(root, "raw", "edge.csv.gz"), []byte("0,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(root, Options{}); err == nil || !strings.Contains(err.Error(), "raw/edge.csv.gz: not a valid gzip file") {
		t.Errorf("plain text under .gz: %v", err)
	}
	// A gzip stream cut short.
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(strings.Repeat("0,1\n", 10000)))
	zw.Close()
	os.WriteFile(filepath.Join(root, "raw", "edge.csv.gz"), buf.Bytes()[:buf.Len()/2], 0o644)
	if _, err := Load(root, Options{}); err == nil || !strings.Contains(err.Error(), "raw/edge.csv.gz: read error") {
		t.Errorf("truncated gzip: %v", err)
	}
	empty := t.TempDir()
	if _, err := Load(empty, Options{}); err == nil || !strings.Contains(err.Error(), "not an OGB dataset folder") {
		t.Errorf("empty folder: %v", err)
	}
	os.Mkdir(filepath.Join(empty, "raw"), 0o755)
	if _, err := Load(empty, Options{}); err == nil || !strings.Contains(err.Error(), "raw/ has no edge.csv.gz") {
		t.Errorf("raw without edges: %v", err)
	}
}

// TestLoadLarge checks multi-chunk parsing (several workers, lines split
// across buffer boundaries, a line longer than a buffer) against the graph
// package's own construction.
func TestLoadLarge(t *testing.T) {
	const n, m = 20000, 150000
	r := rng.New(9)
	var edges, feats, labels strings.Builder
	src := make([]int32, m)
	dst := make([]int32, m)
	for i := range m {
		src[i], dst[i] = int32(r.Intn(n)), int32(r.Intn(n))
		fmt.Fprintf(&edges, "%d,%d\n", src[i], dst[i])
	}
	const f = 8
	want := make([]float32, 0, n*f)
	for v := range n {
		for j := range f {
			x := float32(r.Intn(2000000)-1000000) / 1000
			want = append(want, x)
			if j > 0 {
				feats.WriteByte(',')
			}
			feats.WriteString(strconv.FormatFloat(float64(x), 'g', -1, 32))
		}
		feats.WriteByte('\n')
		fmt.Fprintf(&labels, "%d\n", v%5)
	}
	root := writeOGB(t, map[string]string{
		"raw/edge.csv.gz":       edges.String(),
		"raw/node-feat.csv.gz":  feats.String(),
		"raw/node-label.csv.gz": labels.String(),
	})
	var stages []string
	var last float64
	d, err := Load(root, Options{Workers: 3, Progress: func(stage string, frac float64) {
		if len(stages) == 0 || stages[len(stages)-1] != stage {
			stages = append(stages, stage)
		}
		if frac < 0 || frac > 1 {
			t.Errorf("progress %v", frac)
		}
		last = frac
	}})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := graph.FromEdges(n, src, dst, true)
	g = g.Symmetrize().RemoveSelfLoops()
	if !slices.Equal(d.Graph.Indptr, g.Indptr) || !slices.Equal(d.Graph.Indices, g.Indices) {
		t.Error("graph differs from FromEdges+Symmetrize+RemoveSelfLoops")
	}
	if !slices.Equal(d.X, want) {
		t.Error("features differ")
	}
	if d.NumClasses != 5 || d.Y[7] != 2 {
		t.Errorf("labels: %d classes, Y[7]=%d", d.NumClasses, d.Y[7])
	}
	if !slices.Contains(stages, "read edges") || !slices.Contains(stages, "read features") || last != 1 {
		t.Errorf("progress stages %v, last %v", stages, last)
	}

	// An error deep inside a multi-chunk file reports the right line.
	bad := edges.String() + "1,x\n" + strings.Repeat("1,2\n", 300000)
	root2 := writeOGB(t, map[string]string{
		"raw/edge.csv.gz":       bad,
		"raw/node-feat.csv.gz":  feats.String(),
		"raw/node-label.csv.gz": labels.String(),
	})
	if _, err := Load(root2, Options{Workers: 3}); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("line %d: bad node id", m+1)) {
		t.Errorf("error in a large file: %v", err)
	}
}

func TestLongLine(t *testing.T) {
	const cols = 400000 // about 1.6 MB per line, more than one buffer
	row := strings.TrimSuffix(strings.Repeat("0.5,", cols), ",") + "\n"
	root := writeOGB(t, map[string]string{
		"raw/edge.csv.gz":       "0,1\n",
		"raw/node-feat.csv.gz":  row + row + row,
		"raw/node-label.csv.gz": "0\n1\n0\n",
	})
	d, err := Load(root, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if d.NumFeatures != cols || d.NumNodes() != 3 || d.X[len(d.X)-1] != 0.5 {
		t.Errorf("got %d features, %d nodes", d.NumFeatures, d.NumNodes())
	}
}

func TestParseFloat32(t *testing.T) {
	cases := []string{"0", "-0", "1", "0.5", "-0.057943", "3.", ".25", "+.5", "1e5", "1.5E-3", "123456789",
		"0.1234567", "1234.567", "-9999999", "0.000000000001", "3.4028235e38", "1e-45", "007.50", "nan", "inf", "-Inf", " 2.5 "}
	r := rng.New(3)
	for range 2000 {
		cases = append(cases, strconv.FormatFloat(r.NormFloat64()*math.Pow(10, float64(r.Intn(12)-6)), 'f', r.Intn(9), 64))
	}
	for _, s := range cases {
		got, err := parseFloat32([]byte(s))
		want, werr := strconv.ParseFloat(strings.TrimSpace(s), 32)
		if err != nil || werr != nil {
			t.Errorf("%q: %v / %v", s, err, werr)
			continue
		}
		if math.Float32bits(got) != math.Float32bits(float32(want)) && !(math.IsNaN(float64(got)) && math.IsNaN(want)) {
			t.Errorf("%q: got %v, want %v", s, got, float32(want))
		}
	}
	for _, s := range []string{"", "-", ".", "1.2.3", "1,5", "abc", "1e", "0x1p3x"} {
		if _, err := parseFloat32([]byte(s)); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
	if got, err := parseFloat32([]byte("1e39")); err != nil || !math.IsInf(float64(got), 1) {
		t.Errorf("overflow: %v %v", got, err)
	}
}

func TestParseNoAllocs(t *testing.T) {
	fast, slow, integer := []byte("-0.057943"), []byte("1.2345678901e-7"), []byte("123456")
	if a := testing.AllocsPerRun(100, func() {
		parseFloat32(fast)
		parseFloat32(slow)
		parseInt(integer)
	}); a != 0 {
		t.Errorf("%v allocations per parse", a)
	}
}

func TestParseInt(t *testing.T) {
	for s, want := range map[string]int64{"0": 0, "-5": -5, "+7": 7, " 12 ": 12, "2147483646": 2147483646, "1234567890123456789": 1234567890123456789} {
		if got, err := parseInt([]byte(s)); err != nil || got != want {
			t.Errorf("%q: %v %v", s, got, err)
		}
	}
	for _, s := range []string{"", "-", "1.0", "1e3", "99999999999999999999", "0x10"} {
		if _, err := parseInt([]byte(s)); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

func TestBuildSymmetric(t *testing.T) {
	r := rng.New(4)
	for _, n := range []int{0, 1, 7, 500} {
		m := 3 * n
		src, dst := make([]int32, m), make([]int32, m)
		for i := range m {
			src[i], dst[i] = int32(r.Intn(n)), int32(r.Intn(n))
		}
		for _, workers := range []int{1, 4, 64} {
			got := buildSymmetric(n, src, dst, workers)
			want, _ := graph.FromEdges(n, src, dst, true)
			want = want.Symmetrize().RemoveSelfLoops()
			if !slices.Equal(got.Indptr, want.Indptr) || !slices.Equal(got.Indices, want.Indices) {
				t.Errorf("n=%d workers=%d: differs", n, workers)
			}
			if err := got.Validate(); err != nil {
				t.Error(err)
			}
		}
	}
}

// BenchmarkLoad loads a generated folder: 50k nodes × 100 features, 500k
// edges (about 45 MB of CSV text, gzipped).
// Run with: go test -run x -bench Load ./gnn/data/ogb/
func BenchmarkLoad(b *testing.B) {
	const n, m, f = 50000, 500000, 100
	r := rng.New(1)
	var edges, feats, labels strings.Builder
	for range m {
		fmt.Fprintf(&edges, "%d,%d\n", r.Intn(n), r.Intn(n))
	}
	for v := range n {
		for j := range f {
			if j > 0 {
				feats.WriteByte(',')
			}
			feats.WriteString(strconv.FormatFloat(r.NormFloat64(), 'f', 6, 32))
		}
		feats.WriteByte('\n')
		fmt.Fprintf(&labels, "%d\n", v%47)
	}
	root := writeOGB(b, map[string]string{
		"raw/edge.csv.gz":       edges.String(),
		"raw/node-feat.csv.gz":  feats.String(),
		"raw/node-label.csv.gz": labels.String(),
	})
	b.SetBytes(int64(edges.Len() + feats.Len() + labels.Len()))
	b.ResetTimer()
	for b.Loop() {
		if _, err := Load(root, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// gzipBytes compresses b.
func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestLineTooLong(t *testing.T) {
	digits := bytes.Repeat([]byte("1"), 8<<20) // 8 MB of digits on line 3
	edges := append([]byte("0,1\n1,2\n"), digits...)
	edges = append(edges, ",0\n"...)
	for _, tc := range []struct {
		name string
		raw  []byte
	}{
		{"raw/edge.csv.gz", gzipBytes(t, edges)},
		{"raw/edge.csv", edges},
		{"raw/edge.csv.gz", gzipBytes(t, edges[:len(edges)-3])}, // no newline at the end
	} {
		root := writeOGB(t, map[string]string{
			"raw/node-feat.csv.gz":  "1\n2\n3\n",
			"raw/node-label.csv.gz": "0\n1\n0\n",
		})
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(tc.name)), tc.raw, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(root, Options{Workers: 2})
		want := tc.name + ": line 3: longer than"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s (%d bytes): got %v, want %q", tc.name, len(tc.raw), err, want)
		}
	}
}

func TestLineLimitInGrownBuffer(t *testing.T) {
	// A line just under the limit forces a grown buffer; the next one, over
	// the limit, ends inside that buffer and must still be refused.
	short := strings.Repeat("0", MaxLineBytes-10)
	long := strings.Repeat("0", MaxLineBytes+10)
	var text bytes.Buffer
	for _, part := range []string{"1\n", short, "\n", long, "\n"} {
		text.WriteString(part)
	}
	err := parseStream(bytes.NewReader(text.Bytes()), 2, func() {},
		func(b []byte, _ int64) (int, error) { return len(b), nil },
		func(int) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "line 3: longer than") {
		t.Errorf("got %v, want line 3 refused", err)
	}
	text.Reset()
	text.WriteString("1\n" + short + "\n" + short + "\n")
	total := 0
	err = parseStream(bytes.NewReader(text.Bytes()), 2, func() {},
		func(b []byte, _ int64) (int, error) { return len(b), nil },
		func(n int) error { total += n; return nil })
	if err != nil || total != text.Len() {
		t.Errorf("lines under the limit: %v, %d of %d bytes", err, total, text.Len())
	}
}

// featsAndLabels returns node-feat and node-label files for n nodes.
func featsAndLabels(n int) map[string]string {
	var feats, labels strings.Builder
	for i := range n {
		fmt.Fprintf(&feats, "%d\n", i)
		fmt.Fprintf(&labels, "%d\n", i%3)
	}
	return map[string]string{"raw/node-feat.csv.gz": feats.String(), "raw/node-label.csv.gz": labels.String()}
}

func TestDuplicateEdgeBomb(t *testing.T) {
	const n = 200
	files := featsAndLabels(n)
	lines := maxMultiplicity*n*(n+1)/2 + 1000 // just past the bound
	text := bytes.Repeat([]byte("3,7\n"), lines)
	files["raw/num-edge-list.csv.gz"] = "2000000000\n"
	root := writeOGB(t, files)
	gz := gzipBytes(t, text)
	if len(gz) > 64<<10 {
		t.Fatalf("the test file is %d bytes compressed", len(gz))
	}
	if err := os.WriteFile(filepath.Join(root, "raw", "edge.csv.gz"), gz, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(root, Options{Workers: 2})
	want := fmt.Sprintf("raw/edge.csv.gz: more than %d edge lines for %d nodes", maxMultiplicity*n*(n+1)/2, n)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestDuplicateEdgesCompacted(t *testing.T) {
	const n = 100
	r := rng.New(7)
	var text strings.Builder
	var src, dst []int32
	// Two chunks, more than minCompact: the first is compacted when the
	// second arrives. Edges among nodes below n/2 come only in the first.
	for i := range 300000 {
		base := int32(0)
		if i >= 150000 {
			base = n / 2
		}
		s, d := base+int32(r.Intn(n/2)), base+int32(r.Intn(n/2))
		src, dst = append(src, s), append(dst, d)
		fmt.Fprintf(&text, "%d,%d\n", s, d)
	}
	files := featsAndLabels(n)
	files["raw/edge.csv.gz"] = text.String()
	d, err := Load(writeOGB(t, files), Options{Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := buildSymmetric(n, src, dst, 1)
	if !slices.Equal(d.Graph.Indptr, want.Indptr) || !slices.Equal(d.Graph.Indices, want.Indices) {
		t.Errorf("graph differs after compaction: %d entries, want %d", len(d.Graph.Indices), len(want.Indices))
	}

	l := newEdgeList(n)
	chunk := edgeChunk{src: src[:1000], dst: dst[:1000]}
	for range 300 {
		if err := l.add(chunk); err != nil {
			t.Fatal(err)
		}
		if int64(cap(l.src)) > l.compactAt+1000 {
			t.Fatalf("edge list grew to %d, past %d", cap(l.src), l.compactAt+1000)
		}
	}
}

func TestEdgeListMemoryLimit(t *testing.T) {
	l := newEdgeList(1 << 20) // too many nodes to compact
	l.memLimit = 1 << 20
	src := make([]int32, 100000)
	var err error
	for i := 0; i < 10 && err == nil; i++ {
		err = l.add(edgeChunk{src: src, dst: src})
	}
	if err == nil || !strings.Contains(err.Error(), "the edge list (200000 edges read so far) needs about") {
		t.Errorf("got %v, want the edge list refused at the memory limit", err)
	}
	if cap(l.src) > 1<<20/8 {
		t.Errorf("grew to %d edges, past the limit", cap(l.src))
	}
}

func TestGrowChecked(t *testing.T) {
	s, err := growChecked(make([]float32, 0, 10), 5, "the feature matrix", 1<<10)
	if err != nil || cap(s) != 10 {
		t.Errorf("room enough: cap %d, %v", cap(s), err)
	}
	s, err = growChecked(append(s, 1, 2, 3), 100, "the feature matrix", 1<<10)
	if err != nil || cap(s) < 103 || len(s) != 3 || s[2] != 3 {
		t.Errorf("grown: len %d cap %d, %v", len(s), cap(s), err)
	}
	_, err = growChecked(s, 1000, "the feature matrix", 1<<10)
	if err == nil || !strings.Contains(err.Error(), "the feature matrix needs about") {
		t.Errorf("past the limit: %v", err)
	}
}

func TestQuoteLongLine(t *testing.T) {
	root := writeOGB(t, map[string]string{
		"raw/edge.csv.gz":       "0,1\n" + strings.Repeat("7", 1<<20) + "x,1\n",
		"raw/node-feat.csv.gz":  "1\n2\n",
		"raw/node-label.csv.gz": "0\n1\n",
	})
	_, err := Load(root, Options{Workers: 2})
	if err == nil || !strings.Contains(err.Error(), `raw/edge.csv.gz: line 2: bad node id in "777`) ||
		!strings.Contains(err.Error(), "... (1048579 bytes)") || len(err.Error()) > 300 {
		t.Errorf("got %.400v", err)
	}
}
