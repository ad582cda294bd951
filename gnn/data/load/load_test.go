package load

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/data/npz"
	"github.com/gnnscope/gnnscope/gnn/graph"
)

func writeNPZ(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "mini.npz")
	err := npz.Write(path, map[string]*npz.Array{
		"adj_indptr":  {Data: []int32{0, 1, 2, 3}},
		"adj_indices": {Data: []int32{1, 2, 0}},
		"adj_shape":   {Data: []int64{3, 3}},
		"attr_matrix": {Shape: []int{3, 2}, Data: []float32{1, 2, 3, 4, 5, 6}},
		"labels":      {Data: []int64{0, 1, 1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func writeOGB(t *testing.T, dir string) string {
	t.Helper()
	root := filepath.Join(dir, "ogbn_mini")
	for rel, content := range map[string]string{
		"raw/edge.csv.gz":         "0,1\n1,2\n",
		"raw/node-feat.csv.gz":    "1,2\n3,4\n5,6\n",
		"raw/node-label.csv.gz":   "0\n1\n0\n",
		"split/s/train.csv.gz":    "0\n",
		"split/s/valid.csv.gz":    "1\n",
		"split/s/test.csv.gz":     "2\n",
		"processed/ignored.pt":    "x",
		"raw/../RELEASE_v1.txt":   "release",
		"split/s/../../README.md": "readme",
	} {
		p := filepath.Join(root, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
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

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	npzPath := writeNPZ(t, dir)
	root := writeOGB(t, dir)
	cache := filepath.Join(dir, "x.gsd")
	if err := data.Save(cache, tinyDataset()); err != nil {
		t.Fatal(err)
	}
	renamed := filepath.Join(dir, "cache.bin")
	os.Link(cache, renamed)
	for ref, want := range map[string]Kind{
		"synth-tiny":                     KindPreset,
		npzPath:                          KindNPZ,
		root:                             KindOGB,
		filepath.Join(root, "raw"):       KindOGB,
		cache:                            KindCache,
		renamed:                          KindCache,
		filepath.Join(root, "split"):     -1,
		filepath.Join(root, "README.md"): -1,
	} {
		got, err := Resolve(ref)
		if want < 0 {
			if err == nil {
				t.Errorf("%s: resolved to %v", ref, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%s: %v %v, want %v", ref, got, err, want)
		}
	}
	_, err := Resolve("cora")
	if err == nil || !strings.Contains(err.Error(), "synth-tiny") || !strings.Contains(err.Error(), "FILE.npz") {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := Resolve(filepath.Join(dir, "nope.npz")); err == nil || !strings.Contains(err.Error(), "nope.npz") {
		t.Errorf("missing file: %v", err)
	}
}

func tinyDataset() *data.Dataset {
	g, _ := graph.FromEdges(3, []int32{0, 1, 1, 2}, []int32{1, 0, 2, 1}, true)
	return &data.Dataset{Name: "tiny", Graph: g, X: []float32{1, 2, 3}, NumFeatures: 1, Y: []int32{0, 1, -1}, NumClasses: 2}
}

func TestDefaultCacheDir(t *testing.T) {
	t.Setenv("GNNSCOPE_HOME", "/g")
	t.Setenv("XDG_CACHE_HOME", "/x")
	if d, _ := DefaultCacheDir(); d != filepath.Join("/g", "cache") {
		t.Errorf("GNNSCOPE_HOME: %s", d)
	}
	t.Setenv("GNNSCOPE_HOME", "")
	if d, _ := DefaultCacheDir(); d != filepath.Join("/x", "gnnscope") {
		t.Errorf("XDG_CACHE_HOME: %s", d)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "/h")
	if d, _ := DefaultCacheDir(); d != filepath.Join("/h", ".cache", "gnnscope") {
		t.Errorf("HOME: %s", d)
	}
}

type recorder struct {
	stages []string
	warns  []string
}

func (r *recorder) opts(cacheDir string) Options {
	return Options{
		CacheDir: cacheDir,
		Progress: func(stage string, frac float64) {
			if len(r.stages) == 0 || r.stages[len(r.stages)-1] != stage {
				r.stages = append(r.stages, stage)
			}
		},
		Warn: func(msg string) { r.warns = append(r.warns, msg) },
	}
}

func sameData(t *testing.T, a, b *data.Dataset) {
	t.Helper()
	if a.Name != b.Name || a.NumFeatures != b.NumFeatures || a.NumClasses != b.NumClasses ||
		!slices.Equal(a.Graph.Indptr, b.Graph.Indptr) || !slices.Equal(a.Graph.Indices, b.Graph.Indices) ||
		!slices.Equal(a.X, b.X) || !slices.Equal(a.Y, b.Y) || (a.Split == nil) != (b.Split == nil) {
		t.Fatalf("datasets differ: %s vs %s", a.Name, b.Name)
	}
	if a.Split != nil && (!slices.Equal(a.Split.Train, b.Split.Train) || !slices.Equal(a.Split.Test, b.Split.Test)) {
		t.Fatal("splits differ")
	}
}

func cacheFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*.gsd"))
	return m
}

func TestOpenPresetCached(t *testing.T) {
	cacheDir := filepath.Join(t.TempDir(), "cache") // created on demand
	r := &recorder{}
	first, err := Open("synth-tiny", r.opts(cacheDir))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(r.stages, "edges") || !slices.Contains(r.stages, "save cache") || len(r.warns) > 0 {
		t.Errorf("first open: stages %v, warnings %v", r.stages, r.warns)
	}
	files := cacheFiles(t, cacheDir)
	if len(files) != 1 || !strings.Contains(filepath.Base(files[0]), "synth-tiny-seed0-") {
		t.Fatalf("cache files %v", files)
	}
	if p, _ := CachePath("synth-tiny", Options{CacheDir: cacheDir}); p != files[0] {
		t.Errorf("CachePath %s, file %s", p, files[0])
	}
	r2 := &recorder{}
	second, err := Open("synth-tiny", r2.opts(cacheDir))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r2.stages, []string{"open cache"}) {
		t.Errorf("second open: stages %v", r2.stages)
	}
	sameData(t, first, second)

	opt := r.opts(cacheDir)
	opt.Seed = 5
	other, err := Open("synth-tiny", opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(cacheFiles(t, cacheDir)) != 2 || slices.Equal(other.Graph.Indices, first.Graph.Indices) {
		t.Error("another seed did not give another dataset and cache entry")
	}

	// A damaged cache entry is replaced, with a warning. (Overwriting a
	// mapped file in place would pull the data from under the mappings, so
	// compare against a heap copy and release the mappings first.)
	ref, err := Open("synth-tiny", Options{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	sameData(t, ref, first)
	data.Release(first)
	data.Release(second)
	os.WriteFile(files[0], []byte("garbage"), 0o644)
	r3 := &recorder{}
	again, err := Open("synth-tiny", r3.opts(cacheDir))
	if err != nil {
		t.Fatal(err)
	}
	sameData(t, ref, again)
	if len(r3.warns) != 1 || !strings.Contains(r3.warns[0], "unreadable cache entry") {
		t.Errorf("warnings %v", r3.warns)
	}
	if d, err := data.Load(files[0]); err != nil {
		t.Errorf("cache entry not rewritten: %v", err)
	} else {
		data.Release(d)
	}
}

// A preset with another feature width is another dataset, cached apart
// under a name that says so; its own width names the preset itself.
func TestOpenPresetWidth(t *testing.T) {
	cacheDir := t.TempDir()
	if k, err := Resolve("synth-tiny:features=4"); err != nil || k != KindPreset {
		t.Fatalf("Resolve: %v %v", k, err)
	}
	for _, ref := range []string{"synth-tiny:features=0", "synth-tiny:width=4"} {
		if _, err := Resolve(ref); err == nil || !strings.Contains(err.Error(), ref) {
			t.Errorf("Resolve(%q) = %v, want an error naming it", ref, err)
		}
		if _, err := Open(ref, Options{CacheDir: cacheDir}); err == nil {
			t.Errorf("Open(%q) succeeded", ref)
		}
	}
	opt := Options{CacheDir: cacheDir}
	plain, _ := CachePath("synth-tiny", opt)
	same, _ := CachePath("synth-tiny:features=32", opt)
	narrow, err := CachePath("synth-tiny:features=4", opt)
	if err != nil || plain != same || narrow == plain || !strings.Contains(filepath.Base(narrow), "synth-tiny_features_4-seed0-") {
		t.Fatalf("cache paths %s, %s, %s (%v)", plain, same, narrow, err)
	}
	d, err := Open("synth-tiny:features=4", opt)
	if err != nil {
		t.Fatal(err)
	}
	defer data.Release(d)
	full, err := Open("synth-tiny", Options{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "synth-tiny:features=4" || d.NumFeatures != 4 || len(d.X) != 4*d.NumNodes() ||
		!slices.Equal(d.Graph.Indices, full.Graph.Indices) || !slices.Equal(d.Y, full.Y) {
		t.Errorf("%s: %d features, %d values; graph or labels differ from the preset's", d.Name, d.NumFeatures, len(d.X))
	}
	if files := cacheFiles(t, cacheDir); len(files) != 1 || files[0] != narrow {
		t.Errorf("cache files %v, want %s", files, narrow)
	}
	if _, err := Open("synth-tiny:features=4", Options{NoCache: true, MemLimit: 1000}); err == nil ||
		!strings.Contains(err.Error(), "feature matrix") {
		t.Errorf("a feature matrix over the memory limit: %v", err)
	}
}

func TestOpenNoCache(t *testing.T) {
	cacheDir := t.TempDir()
	opt := Options{CacheDir: cacheDir, NoCache: true}
	if _, err := Open("synth-tiny", opt); err != nil {
		t.Fatal(err)
	}
	if files := cacheFiles(t, cacheDir); len(files) != 0 {
		t.Errorf("NoCache wrote %v", files)
	}
}

func TestOpenUnwritableCache(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	os.WriteFile(blocker, nil, 0o644)
	r := &recorder{}
	d, err := Open(writeNPZ(t, dir), r.opts(filepath.Join(blocker, "cache")))
	if err != nil || d.NumNodes() != 3 {
		t.Fatalf("%v", err)
	}
	if len(r.warns) != 1 || !strings.Contains(r.warns[0], "not cached") {
		t.Errorf("warnings %v", r.warns)
	}
}

func TestOpenFiles(t *testing.T) {
	dir := t.TempDir()
	cacheDir := filepath.Join(dir, "cache")
	npzPath := writeNPZ(t, dir)
	d, err := Open(npzPath, Options{CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "mini" || d.NumNodes() != 3 || !d.Graph.IsSymmetric() {
		t.Errorf("npz: %+v", d)
	}
	cached, err := Open(npzPath, Options{CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	sameData(t, d, cached)
	// Changing the file changes the key.
	before, _ := CachePath(npzPath, Options{CacheDir: cacheDir})
	later := time.Now().Add(time.Hour)
	os.Chtimes(npzPath, later, later)
	after, _ := CachePath(npzPath, Options{CacheDir: cacheDir})
	if before == after {
		t.Error("cache key ignores the modification time")
	}

	root := writeOGB(t, dir)
	o, err := Open(root, Options{CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	if o.Name != "ogbn_mini" || o.Split == nil || o.NumClasses != 2 {
		t.Errorf("ogb: %+v", o)
	}
	viaRaw, err := Open(filepath.Join(root, "raw"), Options{CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	sameData(t, o, viaRaw)
	k1, _ := CachePath(root, Options{CacheDir: cacheDir})
	k2, _ := CachePath(filepath.Join(root, "raw"), Options{CacheDir: cacheDir})
	if k1 != k2 {
		t.Errorf("root and raw/ use different cache entries: %s %s", k1, k2)
	}
	// Files under processed/ do not affect the key.
	os.WriteFile(filepath.Join(root, "processed", "new.pt"), nil, 0o644)
	if k3, _ := CachePath(root, Options{CacheDir: cacheDir}); k3 != k1 {
		t.Error("processed/ changes the key")
	}

	// A .gsd file opens directly.
	gsd := filepath.Join(dir, "t.gsd")
	data.Save(gsd, tinyDataset())
	g, err := Open(gsd, Options{CacheDir: cacheDir})
	if err != nil || g.Name != "tiny" {
		t.Errorf("gsd: %v", err)
	}
	if _, err := Open("no-such-preset", Options{CacheDir: cacheDir}); err == nil {
		t.Error("unknown reference opened")
	}
}

func TestStats(t *testing.T) {
	// Path 0-1-2-3 plus isolated node 4; labels 0,0,1,-1,1; split.
	g, _ := graph.FromEdges(5, []int32{0, 1, 1, 2, 2, 3}, []int32{1, 0, 2, 1, 3, 2}, true)
	d := &data.Dataset{Name: "path", Graph: g, X: make([]float32, 10), NumFeatures: 2,
		Y: []int32{0, 0, 1, -1, 1}, NumClasses: 3, Split: &data.Split{Train: []int32{0}, Valid: []int32{1, 2}, Test: []int32{4}}}
	s := Stats(d)
	if s.Nodes != 5 || s.Edges != 6 || s.Isolated != 1 || s.Labeled != 4 {
		t.Errorf("%+v", s)
	}
	if s.Degree != (DegreeStats{Min: 0, Median: 1, Mean: 1.2, Max: 2}) {
		t.Errorf("degrees %+v", s.Degree)
	}
	// Entries between labeled nodes: 0-1 (same) twice, 1-2 (differ) twice.
	if s.Homophily == nil || *s.Homophily != 0.5 {
		t.Errorf("homophily %v", s.Homophily)
	}
	if !slices.Equal(s.ClassCounts, []int{2, 2, 0}) || *s.Split != (SplitSizes{1, 2, 1}) {
		t.Errorf("classes %v, split %+v", s.ClassCounts, s.Split)
	}
	js, err := s.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(js, &back); err != nil || back.Edges != 6 || *back.Homophily != 0.5 {
		t.Errorf("json round trip: %v %s", err, js)
	}
	text := s.Text()
	for _, want := range []string{"dataset:        path", "edges:          6 stored entries (3 undirected", "median 1,", "homophily:      0.500", "train 1, valid 2, test 1"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	// Even number of nodes: the median averages the middle two degrees.
	g2, _ := graph.FromEdges(4, []int32{0, 1, 0, 2, 0, 3}, []int32{1, 0, 2, 0, 3, 0}, true)
	s2 := Stats(&data.Dataset{Graph: g2, X: make([]float32, 4), NumFeatures: 1, Y: []int32{-1, -1, -1, -1}, NumClasses: 1})
	if s2.Degree.Median != 1 || s2.Degree.Max != 3 || s2.Homophily != nil {
		t.Errorf("%+v", s2)
	}
	if !strings.Contains(s2.Text(), "n/a") {
		t.Error("text without homophily")
	}
	if thousands(2449029) != "2,449,029" || thousands(-1000) != "-1,000" || thousands(12) != "12" {
		t.Error("thousands")
	}
}

// TestOpenPlanetoid: a PyG-style Planetoid folder (NAME/raw/ind.NAME.*)
// resolves from the folder and from raw/, loads with its public split,
// and both references share one cache entry named after the dataset.
func TestOpenPlanetoid(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "Tiny")
	raw := filepath.Join(root, "raw")
	if err := os.MkdirAll(raw, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join("..", "planetoid", "testdata", "proto2")
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(raw, e.Name()), b, 0o644)
	}
	for _, ref := range []string{root, raw} {
		if k, err := Resolve(ref); err != nil || k != KindPlanetoid {
			t.Fatalf("Resolve(%s) = %v, %v", ref, k, err)
		}
	}
	cacheDir := filepath.Join(dir, "cache")
	r := &recorder{}
	d, err := Open(root, r.opts(cacheDir))
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "tiny" || d.NumNodes() != 515 || d.Split == nil || len(d.Split.Train) != 3 || len(d.Split.Valid) != 500 || len(d.Split.Test) != 4 {
		t.Fatalf("planetoid: %s, %d nodes, split %v", d.Name, d.NumNodes(), d.Split != nil)
	}
	if !slices.Contains(r.stages, "read planetoid") {
		t.Errorf("stages %v", r.stages)
	}
	viaRaw, err := Open(raw, Options{CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	sameData(t, d, viaRaw)
	files := cacheFiles(t, cacheDir)
	if len(files) != 1 || !strings.HasPrefix(filepath.Base(files[0]), "tiny-") {
		t.Errorf("cache files %v", files)
	}
	// A folder that is neither OGB nor Planetoid names both.
	if _, err := Resolve(dir); err == nil || !strings.Contains(err.Error(), "OGB") || !strings.Contains(err.Error(), "Planetoid") {
		t.Errorf("plain folder: %v", err)
	}
}
