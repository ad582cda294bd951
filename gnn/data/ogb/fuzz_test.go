package ogb

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// ogbSeed is one input of FuzzOGBCSV.
type ogbSeed struct {
	edges         []byte
	feats, labels string
	gz            bool
}

// ogbSeeds returns fuzz seeds (edges, features, labels, gzipped edges) from
// the hostile cases: a small gzip of duplicate edges for 200 nodes that
// expands past the repetition bound, and a gzip holding one line of 8 MB.
func ogbSeeds(t testing.TB) []ogbSeed {
	feats := strings.Repeat("1,0.5\n", 200)
	labels := strings.Repeat("0\n1\n", 100)
	bomb := gzipBytes(t, bytes.Repeat([]byte("3,7\n"), maxMultiplicity*200*201/2+1))
	long := gzipBytes(t, append(append([]byte("0,1\n"), bytes.Repeat([]byte("9"), 8<<20)...), ",1\n"...))
	return []ogbSeed{
		{[]byte("0,1\n1,2\n2,2\n"), "1\n2\n3\n", "0\n1\nnan\n", false},
		{[]byte("0,1\r\n\r\n1,0\n"), "1,2\n3,4\n", "0\n\n", false},
		{[]byte("src,dst\n"), "1\n", "0\n", false},
		{[]byte("0,-1\n1,99999999999999999999\n"), "1\n2\n", "0,1\n1,0\n", false},
		{[]byte("0,1"), "1e40,2\n-0.0,.5\n", "1.0\n2e9\n", false},
		{gzipBytes(t, []byte("0,1\n")), "1\n2\n", "0\n1\n", true},
		{bomb, feats, labels, true},
		{long, "1\n2\n", "0\n1\n", true},
	}
}

// FuzzOGBCSV feeds an OGB folder with the given edge, feature and label
// files to Load, and the edge text to the chunked CSV reader. Neither may
// panic; a loaded dataset must be valid, and the reader must give the same
// edges with one worker as with several.
func FuzzOGBCSV(f *testing.F) {
	for _, s := range ogbSeeds(f) {
		f.Add(s.edges, s.feats, s.labels, s.gz)
	}
	f.Fuzz(func(t *testing.T, edges []byte, feats, labels string, gz bool) {
		root := filepath.Join(t.TempDir(), "ogbn_fuzz")
		edgeName := "edge.csv"
		if gz {
			edgeName += ".gz"
		}
		for name, b := range map[string][]byte{edgeName: edges, "node-feat.csv": []byte(feats), "node-label.csv": []byte(labels)} {
			p := filepath.Join(root, "raw", name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		d, err := Load(root, Options{Workers: 2})
		if err == nil {
			if verr := d.Validate(); verr != nil {
				t.Fatalf("loaded an invalid dataset: %v", verr)
			}
		} else if !strings.Contains(err.Error(), root) {
			t.Fatalf("error does not name the folder: %v", err)
		}
		if gz {
			return
		}
		one, err1 := readAllEdges(edges, 1)
		three, err3 := readAllEdges(edges, 3)
		if (err1 == nil) != (err3 == nil) || (err1 != nil && err1.Error() != err3.Error()) {
			t.Fatalf("errors differ: %v, %v", err1, err3)
		}
		if err1 == nil && (!slices.Equal(one.src, three.src) || !slices.Equal(one.dst, three.dst)) {
			t.Fatalf("edges differ between one and three workers")
		}
	})
}

// readAllEdges parses edge text for a graph of 1000 nodes with the given
// number of workers.
func readAllEdges(text []byte, workers int) (edgeChunk, error) {
	var all edgeChunk
	err := parseStream(bytes.NewReader(text), workers, func() {},
		func(b []byte, first int64) (edgeChunk, error) { return parseEdges(b, first, 1000) },
		func(c edgeChunk) error {
			all.src, all.dst = append(all.src, c.src...), append(all.dst, c.dst...)
			return nil
		})
	return all, err
}
