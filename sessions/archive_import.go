package sessions

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gnnscope/gnnscope/profile"
)

// ErrBadArchive is wrapped by the errors of Import for input that is not
// a session archive, or one it refuses (unsafe paths, links, devices,
// several sessions, entries over the limits, a damaged or truncated file).
var ErrBadArchive = errors.New("not an acceptable gnnscope session archive")

// ImportOptions tune Import.
type ImportOptions struct {
	// Replace replaces an existing session with the same id (otherwise
	// Import refuses with an error wrapping os.ErrExist). A session with a
	// running run is never replaced (ErrRunning).
	Replace bool
	// CanReplace, if set, is asked before an existing session is
	// replaced; an error refuses the import (e.g. runs not started yet).
	CanReplace func(*Session) error
	// Check, if set, is asked about the extracted session folder before
	// it goes into the store: the files of other packages (the runner's
	// launch.json) are checked there, and an error refuses the import
	// (ErrBadArchive).
	Check func(dir string) error
	// Limits: number of files, bytes of one file. Zero means the
	// default (DefaultMaxFiles, DefaultMaxFileBytes).
	MaxFiles     int
	MaxFileBytes int64
	// Limit of the files' total (see DefaultMaxExpansion): at most
	// MaxExpansion times the archive's size, at least MinTotalBytes, at
	// most MaxTotalBytes. Zero means the default (DefaultMaxExpansion,
	// DefaultMinTotalBytes, DefaultMaxTotalBytes); a negative
	// MaxExpansion leaves MaxTotalBytes alone.
	MaxExpansion  int64
	MinTotalBytes int64
	MaxTotalBytes int64
	// ArchiveSize is the archive's size in bytes, if known (ImportFile
	// sets it for a regular file); otherwise the ratio applies to the
	// bytes read so far.
	ArchiveSize int64

	// create opens a new file of the extracted session for writing
	// (default: os.OpenFile, mode 0600, which must not exist); tests
	// make it fail as a full disk does.
	create func(path string) (io.WriteCloser, error)
}

// ImportReport says what Import did.
type ImportReport struct {
	ID       string `json:"id"`
	Name     string `json:"name,omitempty"`
	Dir      string `json:"dir"`
	Files    int    `json:"files"`
	Bytes    int64  `json:"bytes"`
	Replaced bool   `json:"replaced"` // an existing session was replaced
	// RenamedFrom is the archive's session id when it is not one the
	// store makes (CheckID): the session got a new id (ID).
	RenamedFrom string   `json:"renamed_from,omitempty"`
	Manifest    Manifest `json:"manifest"`
}

// ImportInfo is the record an imported session keeps in its folder.
type ImportInfo struct {
	Imported time.Time `json:"imported"`
	Exported time.Time `json:"exported"`
	Host     string    `json:"host,omitempty"`    // the exporting machine
	Running  []string  `json:"running,omitempty"` // runs exported while running
	Version  int       `json:"v"`                 // archive version
}

// ImportInfo returns the import record of a session that was imported
// (nil, nil for one that was not).
func (s *Session) ImportInfo() (*ImportInfo, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, importFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", s.ID(), err)
	}
	var info ImportInfo
	if err := json.Unmarshal(b, &info); err != nil {
		return nil, fmt.Errorf("session %s: %s: %w", s.ID(), importFile, err)
	}
	return &info, nil
}

// imported reports whether the session was imported from an archive: its
// journals were written elsewhere, so a run without run_end will never get
// one here.
func (s *Session) imported() bool {
	_, err := os.Stat(filepath.Join(s.dir, importFile))
	return err == nil
}

// ImportFile imports the archive file at p (see Import); errors name it.
// The archive's size sets the limit of what it may expand to (see
// DefaultMaxExpansion).
func (st *Store) ImportFile(p string, opts ImportOptions) (*Session, ImportReport, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, ImportReport{}, fmt.Errorf("import: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && opts.ArchiveSize <= 0 {
		opts.ArchiveSize = fi.Size()
	}
	s, rep, err := st.Import(f, opts)
	if err != nil {
		return nil, rep, fmt.Errorf("import %s: %w", p, err)
	}
	return s, rep, nil
}

// Import adds the session in an archive made by Export to the store. It
// extracts into a temporary folder inside the store and renames it into
// place, so a refused or failed import leaves the store as it was. It
// refuses (ErrBadArchive) anything but one session folder of regular
// files and folders with safe names: absolute paths, "..", links, devices,
// entries outside the folder or duplicated, files over the limits, files
// the manifest does not list or lists with another size, a damaged or
// truncated file, files that add up to more than the limit for the
// archive's size (ErrArchiveTooLarge, see DefaultMaxExpansion). Pid files
// in the archive are ignored. It refuses to replace an existing session
// unless opts.Replace. A failure to write into the store (a full disk, a
// read-only folder) is a *StoreError, not ErrBadArchive.
//
// The extracted files are private to their owner: mode 0600, folders
// 0700 (less where the umask says so). An import works in a hidden folder
// of the store that it holds a lock on; the folder of an import that was
// killed is removed by the next import.
//
// The imported session records where it came from (Session.ImportInfo);
// its runs read their status from their journals, and one without
// run_end reads as crashed (its writer is not on this machine).
func (st *Store) Import(r io.Reader, opts ImportOptions) (*Session, ImportReport, error) {
	var rep ImportReport
	opts = opts.withDefaults()
	cr := &countingReader{r: r}
	lim := newImportLimit(opts, cr)
	zr, err := gzip.NewReader(cr)
	if err != nil {
		return nil, rep, badArchive("not gzip-compressed (%w)", err)
	}
	tr := tar.NewReader(zr)
	man, err := readManifest(tr)
	if err != nil {
		return nil, rep, badArchive("%w", err)
	}
	var listed int64
	for _, f := range man.Files {
		listed += min(f.Size, opts.MaxTotalBytes+1) // no overflow
	}
	if !lim.allows(listed) {
		return nil, rep, lim.exceeded()
	}
	id := importID(man, &rep)
	sessionsDir := filepath.Join(st.root, "sessions")
	dest := filepath.Join(sessionsDir, id)
	rep.Dir = dest
	if _, err := os.Lstat(dest); err == nil && !opts.Replace {
		return nil, rep, fmt.Errorf("session %s is already in the store (%w)", id, os.ErrExist)
	}

	removeStaleImports(sessionsDir)
	work, lock, err := importDir(sessionsDir)
	if err != nil {
		return nil, rep, fmt.Errorf("import session %s: %w", id, storeErr(st.root, "", err))
	}
	defer func() {
		os.RemoveAll(work)
		lock.Close()
	}()
	tmp := filepath.Join(work, id)
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return nil, rep, fmt.Errorf("import session %s: %w", id, storeErr(st.root, "", err))
	}
	x := extraction{tr: tr, zr: zr, tmp: tmp, root: st.root, man: man, opts: opts, lim: lim}
	if err := x.entries(&rep); err != nil {
		return nil, rep, err
	}
	if err := checkMeta(tmp, man.ID); err != nil {
		return nil, rep, err
	}
	if err := renameMeta(tmp, id); err != nil {
		return nil, rep, fmt.Errorf("import session %s: %w", id, storeErr(st.root, metaFile, err))
	}
	if opts.Check != nil {
		if err := opts.Check(tmp); err != nil {
			return nil, rep, badArchive("%w", err)
		}
	}
	if err := st.writeImportInfo(tmp, man); err != nil {
		return nil, rep, fmt.Errorf("import session %s: %w", id, err)
	}
	if err := st.commitImport(tmp, dest, work, opts, &rep); err != nil {
		return nil, rep, err
	}
	s, err := st.Get(id)
	if err != nil {
		return nil, rep, fmt.Errorf("import session %s: %w", id, err)
	}
	return s, rep, nil
}

// writeImportInfo records in the extracted session folder tmp where the
// session came from (Session.ImportInfo).
func (st *Store) writeImportInfo(tmp string, man Manifest) error {
	info := ImportInfo{Imported: time.Now().UTC(), Exported: man.Exported, Host: man.Host, Running: man.Running, Version: man.Version}
	ib, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	err = WriteStoreFile(filepath.Join(tmp, importFile), 0o600, func(w io.Writer) error {
		_, err := w.Write(append(ib, '\n'))
		return err
	})
	if err != nil {
		return storeErr(st.root, importFile, err)
	}
	return nil
}

// badArchive is an error of Import that wraps ErrBadArchive; format's %w
// verbs wrap their causes too.
func badArchive(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadArchive}, a...)...)
}

// extraction is the state of an import extracting its archive.
type extraction struct {
	tr   *tar.Reader
	zr   io.Reader // the gzip stream under tr
	tmp  string    // the folder to extract into
	root string    // the store's root, for errors
	man  Manifest
	opts ImportOptions
	lim  *importLimit
}

// entries extracts the session folder entries that follow the manifest
// into x.tmp, checking each against the manifest and the limits, then
// reads the rest of the gzip stream; it counts the files in rep.
func (x *extraction) entries(rep *ImportReport) error {
	listed := map[string]int64{}
	for _, f := range x.man.Files {
		listed[f.Path] = f.Size
	}
	// lower-cased paths: no duplicates, even on case-insensitive file systems
	seen := map[string]bool{}
	// files, and the folders above them
	entries, maxEntries := 0, x.opts.MaxFiles+maxDepth+1
	for {
		h, err := x.tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, tar.ErrInsecurePath) && h != nil {
			err = nil // entryPath says what is wrong with it
		}
		if err != nil {
			return badArchive("reading it failed (damaged or truncated?): %w", err)
		}
		rel, err := entryPath(h.Name, x.man.ID)
		if err != nil {
			return badArchive("entry %q: %w", h.Name, err)
		}
		if entries++; entries > maxEntries {
			return badArchive("more than %d entries", maxEntries)
		}
		key := strings.ToLower(rel)
		if seen[key] {
			return badArchive("entry %q appears twice", h.Name)
		}
		seen[key] = true
		switch h.Typeflag {
		case tar.TypeDir:
			if rel != "" {
				if err := os.MkdirAll(filepath.Join(x.tmp, filepath.FromSlash(rel)), 0o700); err != nil {
					return storeErr(x.root, rel, err)
				}
			}
			continue
		case tar.TypeReg, '\x00': // '\x00': regular file in old archives
		default:
			return badArchive("entry %q is a %s; only regular files and folders are accepted", h.Name, entryKind(h.Typeflag))
		}
		if rel == "" {
			return badArchive("entry %q: the session folder is a file", h.Name)
		}
		if strings.HasSuffix(rel, pidExt) {
			continue // pid files name processes of another machine
		}
		if err := x.file(h, rel, listed, rep); err != nil {
			return err
		}
	}
	return x.end(listed)
}

// file checks the regular file entry h (rel in the session folder)
// against the manifest's list and the limits and extracts it.
func (x *extraction) file(h *tar.Header, rel string, listed map[string]int64, rep *ImportReport) error {
	want, ok := listed[rel]
	switch {
	case !ok:
		return badArchive("entry %q is not in the manifest", h.Name)
	case h.Size != want:
		return badArchive("entry %q has %d bytes, the manifest says %d", h.Name, h.Size, want)
	case h.Size < 0 || h.Size > x.opts.MaxFileBytes:
		return badArchive("entry %q has %d bytes, over the limit of %d", h.Name, h.Size, x.opts.MaxFileBytes)
	case !x.lim.allows(h.Size):
		return x.lim.exceeded()
	case rep.Files >= x.opts.MaxFiles:
		return badArchive("more than %d files", x.opts.MaxFiles)
	}
	delete(listed, rel)
	dst := filepath.Join(x.tmp, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return storeErr(x.root, rel, err)
	}
	if err := x.extract(dst, rel, h); err != nil {
		return err
	}
	rep.Files++
	rep.Bytes += h.Size
	return nil
}

// end reads the rest of the gzip stream (tar padding, then gzip's
// checksum) and checks that no file of the manifest is missing.
func (x *extraction) end(listed map[string]int64) error {
	if n, err := io.Copy(io.Discard, io.LimitReader(x.zr, maxTrailingBytes+1)); err != nil {
		return badArchive("reading it failed (damaged or truncated?): %w", err)
	} else if n > maxTrailingBytes {
		return badArchive("data after the end of the archive")
	}
	if len(listed) > 0 {
		missing := make([]string, 0, len(listed))
		for p := range listed {
			missing = append(missing, p)
		}
		slices.Sort(missing)
		return badArchive("files of the manifest are missing (truncated?): %s", strings.Join(missing, ", "))
	}
	return nil
}

// extract writes the entry's data to a new file dst (it must not exist),
// counting it against the limit, and sets its modification time. An error
// of the file is a store error; one of reading the entry, the archive's.
func (x *extraction) extract(dst, rel string, h *tar.Header) error {
	f, err := x.opts.create(dst)
	if err != nil {
		return storeErr(x.root, rel, err)
	}
	sink := &importSink{w: f, lim: x.lim}
	n, err := io.Copy(sink, x.tr)
	if cerr := f.Close(); cerr != nil && sink.werr == nil {
		sink.werr = cerr
	}
	switch {
	case sink.werr != nil:
		return storeErr(x.root, rel, sink.werr)
	case errors.Is(err, ErrArchiveTooLarge):
		return err
	case err != nil:
		return badArchive("entry %q: %w", h.Name, err)
	case n != h.Size:
		return badArchive("entry %q: %d of %d bytes (truncated)", h.Name, n, h.Size)
	}
	if !h.ModTime.IsZero() {
		_ = os.Chtimes(dst, h.ModTime, h.ModTime)
	}
	return nil
}

// checkMeta checks that the extracted folder tmp holds session id's
// session.json.
func checkMeta(tmp, id string) error {
	// session.json must be there and be this session's
	b, err := os.ReadFile(filepath.Join(tmp, metaFile))
	if err != nil {
		return badArchive("no %s", metaFile)
	}
	var meta SessionMeta
	if err := json.Unmarshal(b, &meta); err != nil {
		return badArchive("%s: %w", metaFile, err)
	}
	if meta.ID != "" && meta.ID != id {
		return badArchive("%s is session %q, the manifest says %q", metaFile, meta.ID, id)
	}
	if err := checkVariantNames(meta); err != nil {
		return badArchive("%w", err)
	}
	return nil
}

// commitImport moves the extracted folder tmp to dest, replacing an
// existing session if allowed.
func (st *Store) commitImport(tmp, dest, work string, opts ImportOptions, rep *ImportReport) error {
	id := rep.ID
	if _, err := os.Lstat(dest); err == nil {
		if !opts.Replace {
			return fmt.Errorf("session %s is already in the store (%w)", id, os.ErrExist)
		}
		old, err := st.Get(id)
		if err == nil {
			states, err := old.RunStates()
			if err != nil {
				return fmt.Errorf("import: replace session %s: %w", id, err)
			}
			for _, r := range states {
				if r.Status == profile.StatusRunning {
					return fmt.Errorf("import: will not replace session %s: %w (run %s)", id, ErrRunning, r.Run)
				}
			}
			if opts.CanReplace != nil {
				if err := opts.CanReplace(old); err != nil {
					return fmt.Errorf("import: will not replace session %s: %w", id, err)
				}
			}
		}
		// move the old one aside (it is removed with the work folder),
		// then the new one in
		aside := filepath.Join(work, "replaced")
		if err := os.Rename(dest, aside); err != nil {
			return fmt.Errorf("import: replace session %s: %w", id, storeErr(st.root, "", err))
		}
		if err := os.Rename(tmp, dest); err != nil {
			if rerr := os.Rename(aside, dest); rerr != nil {
				return fmt.Errorf("import: replace session %s: %w (and restoring the old one failed: %w; it is in %s)", id, storeErr(st.root, "", err), rerr, aside)
			}
			return fmt.Errorf("import: replace session %s: %w", id, storeErr(st.root, "", err))
		}
		rep.Replaced = true
		return nil
	}
	if err := os.Rename(tmp, dest); err != nil {
		if errors.Is(err, os.ErrExist) || errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("session %s is already in the store (%w)", id, os.ErrExist)
		}
		return fmt.Errorf("import session %s: %w", id, storeErr(st.root, "", err))
	}
	return nil
}

// readManifest reads and checks the archive's first entry.
func readManifest(tr *tar.Reader) (Manifest, error) {
	var man Manifest
	h, err := tr.Next()
	if errors.Is(err, tar.ErrInsecurePath) && h != nil {
		err = nil // the name is checked below
	}
	if err != nil {
		return man, fmt.Errorf("not a tar archive, or a damaged or truncated one (%w)", err)
	}
	if h.Name != ArchiveManifestName || (h.Typeflag != tar.TypeReg && h.Typeflag != '\x00') {
		return man, fmt.Errorf("no manifest: the first entry is %q, not %s", h.Name, ArchiveManifestName)
	}
	if h.Size > maxManifestBytes {
		return man, fmt.Errorf("manifest of %d bytes, over the limit of %d", h.Size, maxManifestBytes)
	}
	b, err := io.ReadAll(io.LimitReader(tr, maxManifestBytes))
	if err != nil {
		return man, fmt.Errorf("reading the manifest failed (damaged or truncated?): %w", err)
	}
	if err := json.Unmarshal(b, &man); err != nil {
		return man, fmt.Errorf("manifest: %w", err)
	}
	if man.Format != ArchiveFormat {
		return man, fmt.Errorf("manifest format %q, not %s", man.Format, ArchiveFormat)
	}
	if man.Version < 1 || man.Version > ArchiveVersion {
		return man, fmt.Errorf("archive version %d; this gnnscope reads versions 1 to %d (upgrade it)", man.Version, ArchiveVersion)
	}
	if err := CheckName("session id", man.ID); err != nil {
		return man, fmt.Errorf("manifest: %w", err)
	}
	for _, run := range man.Running {
		if err := CheckName("run", run); err != nil {
			return man, fmt.Errorf("manifest: running: %w", err)
		}
	}
	seen := map[string]bool{}
	for _, f := range man.Files {
		if f.Path == "" {
			return man, errors.New("manifest: a file with an empty path")
		}
		if _, err := entryPath(man.ID+"/"+f.Path, man.ID); err != nil {
			return man, fmt.Errorf("manifest: file %q: %w", f.Path, err)
		}
		if seen[f.Path] || f.Size < 0 {
			return man, fmt.Errorf("manifest: file %q listed twice or with a negative size", f.Path)
		}
		seen[f.Path] = true
	}
	return man, nil
}

// entryPath checks an archive entry's name and returns its path inside the
// session folder id ("" for the folder itself).
func entryPath(name, id string) (string, error) {
	if name == "" || len(name) > 4096 {
		return "", errors.New("empty or overlong path")
	}
	if strings.HasPrefix(name, "/") || filepath.IsAbs(name) || filepath.VolumeName(name) != "" {
		return "", errors.New("absolute path")
	}
	name = strings.TrimPrefix(name, "./")
	name = strings.TrimSuffix(name, "/")
	parts := strings.Split(name, "/")
	for _, p := range parts {
		switch p {
		case "..":
			return "", errors.New("path leads out of the archive folder (..)")
		case "", ".":
			return "", errors.New("path with an empty or '.' component")
		}
	}
	if parts[0] != id {
		return "", fmt.Errorf("outside the session folder %s (an archive holds one session)", id)
	}
	if len(parts)-1 > maxDepth {
		return "", errors.New("too deep")
	}
	for _, p := range parts[1:] {
		if err := CheckName("file", p); err != nil {
			return "", fmt.Errorf("unsafe path: %w", err)
		}
	}
	return strings.Join(parts[1:], "/"), nil
}

// entryKind names a tar entry type.
func entryKind(t byte) string {
	switch t {
	case tar.TypeSymlink:
		return "symbolic link"
	case tar.TypeLink:
		return "hard link"
	case tar.TypeChar:
		return "character device"
	case tar.TypeBlock:
		return "block device"
	case tar.TypeFifo:
		return "named pipe"
	case tar.TypeGNUSparse:
		return "sparse file"
	case tar.TypeXGlobalHeader:
		return "global header"
	}
	return fmt.Sprintf("entry of type %q", t)
}
