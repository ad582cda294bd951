package load

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/data/npz"
	"github.com/gnnscope/gnnscope/gnn/data/ogb"
	"github.com/gnnscope/gnnscope/gnn/data/planetoid"
	"github.com/gnnscope/gnnscope/gnn/data/synth"
)

// formatVersion is part of every cache key: bump it when a loader's output
// changes so that old cache entries are not reused.
const formatVersion = 1

// Options control Open.
type Options struct {
	// CacheDir holds cached datasets. Empty means DefaultCacheDir().
	CacheDir string
	// NoCache disables reading and writing the cache.
	NoCache bool
	// Seed is the generator seed for synthetic presets.
	Seed uint64
	// Split chooses the split folder of an OGB dataset that ships several.
	Split string
	// Progress, if not nil, receives a stage name and the fraction of it
	// done. Calls are never concurrent.
	Progress func(stage string, frac float64)
	// Warn, if not nil, receives problems that do not stop loading, such as
	// a cache file that could not be written.
	Warn func(msg string)
	// MemLimit bounds, in bytes, what a loader may allocate for the sizes a
	// file declares (such as the dense feature matrix of a sparse .npz):
	// a larger declaration is refused with the estimate before anything is
	// allocated. 0 means the memory available on the host.
	MemLimit int64
}

// Kind says what a dataset reference points to.
type Kind int

// The kinds of dataset reference.
const (
	KindPreset    Kind = iota // a synthetic preset name
	KindNPZ                   // a .npz file in the gnn-benchmark layout
	KindOGB                   // an OGB dataset folder (or its raw/ folder)
	KindCache                 // a .gsd dataset cache file
	KindPlanetoid             // a folder of Planetoid files (ind.NAME.*), or its parent
)

// String returns the kind's short name (preset, npz, ogb, cache,
// planetoid).
func (k Kind) String() string {
	switch k {
	case KindPreset:
		return "preset"
	case KindNPZ:
		return "npz"
	case KindOGB:
		return "ogb"
	case KindCache:
		return "cache"
	case KindPlanetoid:
		return "planetoid"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Usage describes the accepted dataset references, for help texts and
// error messages.
const Usage = `a dataset is one of:
  PRESET           a synthetic preset (gnnscope datasets lists them)
  PRESET:features=N  the preset with N features per node (1 to 65536) instead
                   of its own width; the same graph, labels and split
  FILE.npz         a gnn-benchmark .npz file (Cora, CiteSeer, PubMed, Amazon, Coauthor)
  FOLDER           an OGB node-property dataset folder (with raw/ and split/), or its raw/
  FOLDER           a Planetoid folder (PyG's Cora/, or its raw/ with ind.cora.x, ...;
                   Cora, CiteSeer, PubMed with their public split)
  FILE.gsd         a gnnscope dataset cache file`

// Resolve classifies a dataset reference. An unknown reference is an error
// that lists the presets and the accepted forms.
func Resolve(ref string) (Kind, error) {
	if ref == "" {
		return 0, fmt.Errorf("no dataset given; %s", Usage)
	}
	fi, statErr := os.Stat(ref)
	switch {
	case statErr == nil && fi.IsDir():
		_, ogbErr := ogb.Root(ref)
		if ogbErr == nil {
			return KindOGB, nil
		}
		if _, _, err := planetoid.Root(ref); err == nil {
			return KindPlanetoid, nil
		} else if !errors.Is(err, planetoid.ErrNoFiles) {
			return 0, err
		}
		return 0, fmt.Errorf("%w; nor a Planetoid folder (ind.NAME.x, ..., ind.NAME.test.index, here or in raw/)", ogbErr)
	case statErr == nil && !fi.Mode().IsRegular():
		// Reading a FIFO's magic would block until a writer comes.
		return 0, fmt.Errorf("dataset %s: not a regular file or folder (%v)", ref, fi.Mode().Type())
	case statErr == nil:
		ext := strings.ToLower(filepath.Ext(ref))
		switch {
		case ext == data.CacheExt || hasCacheMagic(ref):
			return KindCache, nil
		case ext == ".npz" || hasZipMagic(ref):
			return KindNPZ, nil
		}
		return 0, fmt.Errorf("%s: not a dataset file (expected .npz or %s)", ref, data.CacheExt)
	}
	if _, ok, err := synth.ParseRef(ref); ok {
		if err != nil {
			return 0, err
		}
		return KindPreset, nil
	}
	if errors.Is(statErr, fs.ErrNotExist) && !strings.ContainsAny(ref, `/\`) && !strings.Contains(ref, ".") {
		return 0, fmt.Errorf("unknown dataset %q: not a preset (%s) and no such file or folder%s\n%s",
			ref, strings.Join(presetNames(), ", "), didYouMean(ref, presetNames()), Usage)
	}
	return 0, fmt.Errorf("dataset %s: %w\n%s", ref, statErr, Usage)
}

// didYouMean returns "; did you mean NAME?" for the name of names
// closest to ref within two edits (ties: the first), "" when none is.
func didYouMean(ref string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := editDistance(strings.ToLower(ref), n); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func presetNames() []string {
	var names []string
	for _, p := range synth.Presets() {
		names = append(names, p.Name)
	}
	return names
}

func hasMagic(path, magic string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, len(magic))
	_, err = io.ReadFull(f, b)
	return err == nil && string(b) == magic
}

func hasCacheMagic(path string) bool { return hasMagic(path, data.CacheMagic) }
func hasZipMagic(path string) bool   { return hasMagic(path, "PK\x03\x04") }

// DefaultCacheDir returns $GNNSCOPE_HOME/cache, else $XDG_CACHE_HOME/gnnscope,
// else ~/.cache/gnnscope.
func DefaultCacheDir() (string, error) {
	if h := os.Getenv("GNNSCOPE_HOME"); h != "" {
		return filepath.Join(h, "cache"), nil
	}
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" {
		return filepath.Join(x, "gnnscope"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no cache folder: set GNNSCOPE_HOME or XDG_CACHE_HOME (%w)", err)
	}
	return filepath.Join(home, ".cache", "gnnscope"), nil
}

// CachePath returns the cache file that Open uses for ref with these
// options (it may not exist yet). Cache files are not cached: for a .gsd
// reference it returns the file itself.
func CachePath(ref string, opt Options) (string, error) {
	kind, err := Resolve(ref)
	if err != nil {
		return "", err
	}
	return cachePath(ref, kind, opt)
}

func cachePath(ref string, kind Kind, opt Options) (string, error) {
	if kind == KindCache {
		return ref, nil
	}
	dir := opt.CacheDir
	if dir == "" {
		var err error
		if dir, err = DefaultCacheDir(); err != nil {
			return "", err
		}
	}
	h := sha256.New()
	fmt.Fprintf(h, "gnnscope dataset cache key v%d/%d\n%s\n", formatVersion, data.CacheVersion, kind)
	var base string
	switch kind {
	case KindPreset:
		p, _, err := synth.ParseRef(ref)
		if err != nil {
			return "", err
		}
		cfg := p.Config
		cfg.Workers = 0 // does not change the result
		fmt.Fprintf(h, "%s\n%d\n%#v\n", p.Name, opt.Seed, cfg)
		base = fmt.Sprintf("%s-seed%d", p.Name, opt.Seed)
	case KindNPZ, KindOGB, KindPlanetoid:
		abs, err := filepath.Abs(ref)
		if err != nil {
			return "", err
		}
		root, name := abs, ""
		switch kind {
		case KindOGB:
			if root, err = ogb.Root(abs); err != nil {
				return "", err
			}
			fmt.Fprintf(h, "split=%s\n", opt.Split)
		case KindPlanetoid:
			if root, name, err = planetoid.Root(abs); err != nil {
				return "", err
			}
			fmt.Fprintf(h, "planetoid=%s\n", name)
		}
		fmt.Fprintf(h, "%s\n", root)
		if err := fingerprint(h, root); err != nil {
			return "", err
		}
		base = strings.TrimSuffix(filepath.Base(root), filepath.Ext(root))
		if name != "" {
			base = name // the files' folder is often just raw/
		}
	}
	sum := hex.EncodeToString(h.Sum(nil))[:16]
	return filepath.Join(dir, sanitize(base)+"-"+sum+data.CacheExt), nil
}

// fingerprint writes the size and modification time of path, or of every
// file under it, to w.
func fingerprint(w io.Writer, path string) error {
	return filepath.WalkDir(path, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if p != path && (e.Name() == "processed" || strings.HasPrefix(e.Name(), ".")) {
				return filepath.SkipDir // PyG/OGB outputs, hidden folders
			}
			return nil
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

// Open returns the dataset that ref names: a synthetic preset (generated
// with opt.Seed), a gnn-benchmark .npz file, an OGB dataset folder, a
// Planetoid folder, or a .gsd cache file. Unless opt.NoCache is set, loaded
// and generated datasets are saved in the cache folder and reopened from
// there next time (keyed by preset, seed and configuration, or by the
// input's path, size and modification time). A dataset that went through the cache is
// memory-mapped and read-only (see data.Load); with NoCache, or when the
// cache cannot be written, it lives on the heap.
func Open(ref string, opt Options) (*data.Dataset, error) {
	kind, err := Resolve(ref)
	if err != nil {
		return nil, err
	}
	if kind == KindCache {
		stage(opt, "open cache", 0)
		d, err := data.Load(ref)
		stage(opt, "open cache", 1)
		return d, err
	}
	var path string
	if !opt.NoCache {
		if path, err = cachePath(ref, kind, opt); err != nil {
			warn(opt, fmt.Sprintf("dataset cache disabled: %v", err))
		}
	}
	if path != "" {
		if _, err := os.Stat(path); err == nil {
			stage(opt, "open cache", 0)
			d, err := data.Load(path)
			if err == nil {
				stage(opt, "open cache", 1)
				return d, nil
			}
			warn(opt, fmt.Sprintf("ignoring unreadable cache entry: %v", err))
		}
	}
	d, err := build(ref, kind, opt)
	if err != nil {
		return nil, err
	}
	if path != "" {
		stage(opt, "save cache", 0)
		// The cache folder is private (0700, less if the umask says so),
		// like the files in it (see data.Save).
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			warn(opt, fmt.Sprintf("dataset not cached: %v", err))
		} else if err := data.Save(path, d); err != nil {
			warn(opt, fmt.Sprintf("dataset not cached: %v", err))
		} else if m, err := data.Load(path); err == nil {
			// Hand out the mapped copy: the same (read-only) memory as on
			// every later run, shared through the page cache, and the heap
			// copy can be freed.
			d = m
		}
		stage(opt, "save cache", 1)
	}
	return d, nil
}

// build loads or generates the dataset without the cache.
func build(ref string, kind Kind, opt Options) (*data.Dataset, error) {
	switch kind {
	case KindPreset:
		p, _, err := synth.ParseRef(ref)
		if err != nil {
			return nil, err
		}
		c := p.Config
		what := fmt.Sprintf("generating %s: its %d×%d feature matrix", p.Name, c.Nodes, c.Features)
		if err := data.CheckAlloc(what, 4*int64(c.Nodes)*int64(c.Features), opt.MemLimit); err != nil {
			return nil, err
		}
		d, err := synth.Generate(c, opt.Seed, opt.Progress)
		if err != nil {
			return nil, fmt.Errorf("generate %s: %w", ref, err)
		}
		return d, nil
	case KindNPZ:
		stage(opt, "read npz", 0)
		d, err := npz.LoadGNNBenchmarkWith(ref, npz.Options{MemLimit: opt.MemLimit})
		if err == nil {
			stage(opt, "read npz", 1)
		}
		return d, err
	case KindOGB:
		return ogb.Load(ref, ogb.Options{Split: opt.Split, Progress: opt.Progress})
	case KindPlanetoid:
		stage(opt, "read planetoid", 0)
		d, err := planetoid.Load(ref, planetoid.Options{})
		if err == nil {
			stage(opt, "read planetoid", 1)
		}
		return d, err
	}
	return nil, fmt.Errorf("dataset %s: unsupported kind %v", ref, kind)
}

func stage(opt Options, name string, frac float64) {
	if opt.Progress != nil {
		opt.Progress(name, frac)
	}
}

func warn(opt Options, msg string) {
	if opt.Warn != nil {
		opt.Warn(msg)
	}
}
