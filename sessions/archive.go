package sessions

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Session archives.
//
// A session exports to one gzip-compressed tar file (stdlib only, and any
// tar can list it). Its first entry is the manifest, ArchiveManifestName;
// every other entry lies in one folder named after the session id:
//
//	gnnscope-archive.json        Manifest: format, version, id, files and sizes
//	<id>/session.json
//	<id>/launch.json, <id>/sequencer.log, ...
//	<id>/runs/<run>.jsonl, <id>/runs/<run>.log
//
// Pid files are left out (they name processes of the exporting machine),
// and so are hidden files (temporary files of atomic writes) and the
// import record of a session that was itself imported.
const (
	// ArchiveFormat is the manifest's "format".
	ArchiveFormat = "gnnscope-session-archive"
	// ArchiveVersion is the version of the archive layout this package
	// writes and the newest it reads.
	ArchiveVersion = 1
	// ArchiveManifestName is the name of the manifest entry.
	ArchiveManifestName = "gnnscope-archive.json"
	// importFile records, in an imported session's folder, where it came
	// from (ImportInfo).
	importFile = "import.json"
)

// Default limits of Import (ImportOptions).
const (
	DefaultMaxFiles      = 10000
	DefaultMaxFileBytes  = 8 << 30  // 8 GiB
	DefaultMaxTotalBytes = 32 << 30 // 32 GiB
	maxManifestBytes     = 4 << 20
	maxDepth             = 8 // path components below the session folder
	maxTrailingBytes     = 1 << 20
)

// Manifest is the first entry of a session archive.
type Manifest struct {
	Format   string    `json:"format"` // ArchiveFormat
	Version  int       `json:"v"`      // ArchiveVersion
	ID       string    `json:"id"`     // the session id: the archive's folder
	Name     string    `json:"name,omitempty"`
	Created  time.Time `json:"created"`
	Exported time.Time `json:"exported"`
	Host     string    `json:"host,omitempty"` // host name of the exporting machine
	// Running lists the runs that were still running when the session was
	// exported (with force); their journals end at their last complete line.
	Running []string `json:"running,omitempty"`
	// Files lists every file of the folder, paths relative to it ('/'
	// separated), in archive order.
	Files []ManifestFile `json:"files"`
}

// ManifestFile is one file of a session archive.
type ManifestFile struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// ErrRunning is returned when an operation refuses a session with a
// running run.
var ErrRunning = errors.New("session is running")

// ExportOptions tune Export.
type ExportOptions struct {
	// AllowRunning exports a session whose runs are still running: their
	// journals are copied up to their last complete line (the writer may
	// be in the middle of one), their logs as far as they go.
	AllowRunning bool
}

// ExportReport says what Export wrote.
type ExportReport struct {
	ID      string   `json:"id"`
	Files   int      `json:"files"`
	Bytes   int64    `json:"bytes"`             // file bytes (before compression)
	Running []string `json:"running,omitempty"` // runs exported while running
	// Skipped lists files left out because they cannot be imported (not
	// regular files, unsafe names), with the reason.
	Skipped []string `json:"skipped,omitempty"`
}

// exportFile is one file to write.
type exportFile struct {
	rel  string // '/'-separated path inside the session folder
	abs  string
	size int64
	mod  time.Time
}

// Export writes the session as an archive (see ArchiveFormat) to w. It
// refuses a session with a running run (ErrRunning) unless
// opts.AllowRunning. Files are copied as they are, byte for byte, up to
// their size when the export began; only the journal of a running run is
// cut at its last complete line.
func (s *Session) Export(w io.Writer, opts ExportOptions) (ExportReport, error) {
	id := s.ID()
	rep := ExportReport{ID: id}
	states, err := s.RunStates()
	if err != nil {
		return rep, fmt.Errorf("export session %s: %w", id, err)
	}
	running := map[string]bool{}
	for _, r := range states {
		if r.Status == StatusRunning {
			running[r.Run] = true
			rep.Running = append(rep.Running, r.Run)
		}
	}
	if len(running) > 0 && !opts.AllowRunning {
		return rep, fmt.Errorf("export session %s: %w: %s still running", id, ErrRunning, strings.Join(rep.Running, ", "))
	}
	var dirs []string
	var files []exportFile
	err = filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == s.dir {
			return nil
		}
		rel, err := filepath.Rel(s.dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		name := d.Name()
		switch {
		case strings.HasPrefix(name, "."), strings.HasSuffix(name, pidExt), rel == importFile:
			// temporary files, pid files, the import record
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		case ValidName(name) != nil:
			rep.Skipped = append(rep.Skipped, rel+": not a safe file name")
		case strings.Count(rel, "/") >= maxDepth:
			rep.Skipped = append(rep.Skipped, rel+": too deep")
		case d.IsDir():
			dirs = append(dirs, rel)
			return nil
		case !d.Type().IsRegular():
			rep.Skipped = append(rep.Skipped, rel+": not a regular file")
		default:
			fi, err := d.Info()
			if err != nil {
				return err
			}
			f := exportFile{rel: rel, abs: p, size: fi.Size(), mod: fi.ModTime()}
			if run, ok := strings.CutSuffix(rel, journalExt); ok && running[strings.TrimPrefix(run, "runs/")] && path.Dir(rel) == "runs" {
				if f.size, err = completeLines(p, f.size); err != nil {
					return err
				}
			}
			files = append(files, f)
			return nil
		}
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("export session %s: %w", id, err)
	}
	if !slices.ContainsFunc(files, func(f exportFile) bool { return f.rel == metaFile }) {
		return rep, fmt.Errorf("export session %s: no %s", id, metaFile)
	}
	host, _ := os.Hostname()
	man := Manifest{Format: ArchiveFormat, Version: ArchiveVersion, ID: id, Name: s.Meta.Name, Created: s.Meta.Created,
		Exported: time.Now().UTC(), Host: host, Running: rep.Running, Files: make([]ManifestFile, 0, len(files))}
	for _, f := range files {
		man.Files = append(man.Files, ManifestFile{Path: f.rel, Size: f.size})
	}
	mb, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return rep, fmt.Errorf("export session %s: %w", id, err)
	}
	mb = append(mb, '\n')

	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	hdr := func(name string, typ byte, size int64, mode int64, mod time.Time) *tar.Header {
		return &tar.Header{Typeflag: typ, Name: name, Size: size, Mode: mode, ModTime: mod, Format: tar.FormatPAX}
	}
	if err := tw.WriteHeader(hdr(ArchiveManifestName, tar.TypeReg, int64(len(mb)), 0o644, man.Exported)); err != nil {
		return rep, fmt.Errorf("export session %s: %w", id, err)
	}
	if _, err := tw.Write(mb); err != nil {
		return rep, fmt.Errorf("export session %s: %w", id, err)
	}
	if err := tw.WriteHeader(hdr(id+"/", tar.TypeDir, 0, 0o755, man.Exported)); err != nil {
		return rep, fmt.Errorf("export session %s: %w", id, err)
	}
	for _, d := range dirs {
		if err := tw.WriteHeader(hdr(id+"/"+d+"/", tar.TypeDir, 0, 0o755, man.Exported)); err != nil {
			return rep, fmt.Errorf("export session %s: %w", id, err)
		}
	}
	for _, f := range files {
		if err := copyInto(tw, hdr(id+"/"+f.rel, tar.TypeReg, f.size, 0o644, f.mod), f.abs); err != nil {
			return rep, fmt.Errorf("export session %s: %s: %w", id, f.rel, err)
		}
		rep.Files++
		rep.Bytes += f.size
	}
	if err := tw.Close(); err != nil {
		return rep, fmt.Errorf("export session %s: %w", id, err)
	}
	if err := zw.Close(); err != nil {
		return rep, fmt.Errorf("export session %s: %w", id, err)
	}
	return rep, nil
}

// copyInto writes the first h.Size bytes of the file at p as one entry.
func copyInto(tw *tar.Writer, h *tar.Header, p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	if _, err := io.CopyN(tw, f, h.Size); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("the file shrank while it was exported")
		}
		return err
	}
	return nil
}

// completeLines returns the length of the file's first size bytes up to
// and including their last newline (0 if there is none).
func completeLines(p string, size int64) (int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		from := max(end-int64(len(buf)), 0)
		b := buf[:end-from]
		if _, err := f.ReadAt(b, from); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return from + int64(i) + 1, nil
		}
		end = from
	}
	return 0, nil
}

// ExportFile writes the session's archive to the file at p, through a
// temporary file in the same folder and a rename, so p is either the
// complete archive or untouched.
func (s *Session) ExportFile(p string, opts ExportOptions) (ExportReport, error) {
	rep := ExportReport{ID: s.ID()}
	var exportErr error
	err := WriteFileAtomic(p, 0o644, func(w io.Writer) error {
		rep, exportErr = s.Export(w, opts)
		return exportErr
	})
	switch {
	case exportErr != nil:
		err = exportErr
		if !strings.HasPrefix(err.Error(), "export session") {
			err = fmt.Errorf("export session %s to %s: %w", s.ID(), p, err)
		}
		return rep, err
	case err != nil:
		return rep, fmt.Errorf("export session %s: %w", s.ID(), err)
	}
	return rep, nil
}

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
	// Limits: number of files, bytes of one file, bytes in all. Zero
	// means the default (DefaultMaxFiles, DefaultMaxFileBytes,
	// DefaultMaxTotalBytes).
	MaxFiles      int
	MaxFileBytes  int64
	MaxTotalBytes int64
}

// ImportReport says what Import did.
type ImportReport struct {
	ID       string   `json:"id"`
	Name     string   `json:"name,omitempty"`
	Dir      string   `json:"dir"`
	Files    int      `json:"files"`
	Bytes    int64    `json:"bytes"`
	Replaced bool     `json:"replaced"` // an existing session was replaced
	Manifest Manifest `json:"manifest"`
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
func (st *Store) ImportFile(p string, opts ImportOptions) (*Session, ImportReport, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, ImportReport{}, fmt.Errorf("import: %w", err)
	}
	defer f.Close()
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
// truncated file. Pid files in the archive are ignored. It refuses to
// replace an existing session unless opts.Replace.
//
// The imported session records where it came from (Session.ImportInfo);
// its runs read their status from their journals, and one without
// run_end reads as crashed (its writer is not on this machine).
func (st *Store) Import(r io.Reader, opts ImportOptions) (*Session, ImportReport, error) {
	var rep ImportReport
	if opts.MaxFiles <= 0 {
		opts.MaxFiles = DefaultMaxFiles
	}
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	if opts.MaxTotalBytes <= 0 {
		opts.MaxTotalBytes = DefaultMaxTotalBytes
	}
	bad := func(format string, a ...any) error { // format's %w wrap causes too
		return fmt.Errorf("%w: "+format, append([]any{ErrBadArchive}, a...)...)
	}
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, rep, bad("not gzip-compressed (%w)", err)
	}
	tr := tar.NewReader(zr)
	man, err := readManifest(tr)
	if err != nil {
		return nil, rep, bad("%w", err)
	}
	id := man.ID
	rep.ID, rep.Name, rep.Manifest = id, man.Name, man
	sessionsDir := filepath.Join(st.root, "sessions")
	dest := filepath.Join(sessionsDir, id)
	rep.Dir = dest
	if _, err := os.Lstat(dest); err == nil && !opts.Replace {
		return nil, rep, fmt.Errorf("session %s is already in the store (%w)", id, os.ErrExist)
	}

	removeStaleImports(sessionsDir)
	work, err := os.MkdirTemp(sessionsDir, ".import-")
	if err != nil {
		return nil, rep, fmt.Errorf("import session %s: %w", id, err)
	}
	defer os.RemoveAll(work)
	tmp := filepath.Join(work, id)
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return nil, rep, fmt.Errorf("import session %s: %w", id, err)
	}
	listed := map[string]int64{}
	for _, f := range man.Files {
		listed[f.Path] = f.Size
	}
	seen := map[string]bool{} // lower-cased paths: no duplicates, even on case-insensitive file systems
	var total int64
	entries := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, tar.ErrInsecurePath) && h != nil {
			err = nil // entryPath says what is wrong with it
		}
		if err != nil {
			return nil, rep, bad("reading it failed (damaged or truncated?): %w", err)
		}
		rel, err := entryPath(h.Name, id)
		if err != nil {
			return nil, rep, bad("entry %q: %w", h.Name, err)
		}
		if entries++; entries > opts.MaxFiles+maxDepth+1 { // files, and the folders above them
			return nil, rep, bad("more than %d entries", opts.MaxFiles+maxDepth+1)
		}
		key := strings.ToLower(rel)
		if seen[key] {
			return nil, rep, bad("entry %q appears twice", h.Name)
		}
		seen[key] = true
		switch h.Typeflag {
		case tar.TypeDir:
			if rel != "" {
				if err := os.MkdirAll(filepath.Join(tmp, filepath.FromSlash(rel)), 0o755); err != nil {
					return nil, rep, bad("entry %q: %w", h.Name, err)
				}
			}
			continue
		case tar.TypeReg, '\x00': // '\x00': regular file in old archives
		default:
			return nil, rep, bad("entry %q is a %s; only regular files and folders are accepted", h.Name, entryKind(h.Typeflag))
		}
		if rel == "" {
			return nil, rep, bad("entry %q: the session folder is a file", h.Name)
		}
		if strings.HasSuffix(rel, pidExt) {
			continue // pid files name processes of another machine
		}
		want, ok := listed[rel]
		switch {
		case !ok:
			return nil, rep, bad("entry %q is not in the manifest", h.Name)
		case h.Size != want:
			return nil, rep, bad("entry %q has %d bytes, the manifest says %d", h.Name, h.Size, want)
		case h.Size < 0 || h.Size > opts.MaxFileBytes:
			return nil, rep, bad("entry %q has %d bytes, over the limit of %d", h.Name, h.Size, opts.MaxFileBytes)
		case total+h.Size > opts.MaxTotalBytes:
			return nil, rep, bad("the files add up to more than the limit of %d bytes", opts.MaxTotalBytes)
		case rep.Files >= opts.MaxFiles:
			return nil, rep, bad("more than %d files", opts.MaxFiles)
		}
		total += h.Size
		delete(listed, rel)
		dst := filepath.Join(tmp, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, rep, bad("entry %q: %w", h.Name, err)
		}
		if err := extractFile(dst, tr, h); err != nil {
			return nil, rep, bad("entry %q: %w", h.Name, err)
		}
		rep.Files++
		rep.Bytes += h.Size
	}
	// the rest of the stream: tar padding, then gzip's checksum
	if n, err := io.Copy(io.Discard, io.LimitReader(zr, maxTrailingBytes+1)); err != nil {
		return nil, rep, bad("reading it failed (damaged or truncated?): %w", err)
	} else if n > maxTrailingBytes {
		return nil, rep, bad("data after the end of the archive")
	}
	if len(listed) > 0 {
		missing := make([]string, 0, len(listed))
		for p := range listed {
			missing = append(missing, p)
		}
		slices.Sort(missing)
		return nil, rep, bad("files of the manifest are missing (truncated?): %s", strings.Join(missing, ", "))
	}
	// session.json must be there and be this session's
	b, err := os.ReadFile(filepath.Join(tmp, metaFile))
	if err != nil {
		return nil, rep, bad("no %s", metaFile)
	}
	var meta SessionMeta
	if err := json.Unmarshal(b, &meta); err != nil {
		return nil, rep, bad("%s: %w", metaFile, err)
	}
	if meta.ID != "" && meta.ID != id {
		return nil, rep, bad("%s is session %q, the manifest says %q", metaFile, meta.ID, id)
	}
	info := ImportInfo{Imported: time.Now().UTC(), Exported: man.Exported, Host: man.Host, Running: man.Running, Version: man.Version}
	ib, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return nil, rep, fmt.Errorf("import session %s: %w", id, err)
	}
	if err := writeFileAtomic(filepath.Join(tmp, importFile), append(ib, '\n')); err != nil {
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
				if r.Status == StatusRunning {
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
			return fmt.Errorf("import: replace session %s: %w", id, err)
		}
		if err := os.Rename(tmp, dest); err != nil {
			if rerr := os.Rename(aside, dest); rerr != nil {
				return fmt.Errorf("import: replace session %s: %w (and restoring the old one failed: %w; it is in %s)", id, err, rerr, aside)
			}
			return fmt.Errorf("import: replace session %s: %w", id, err)
		}
		rep.Replaced = true
		return nil
	}
	if err := os.Rename(tmp, dest); err != nil {
		if errors.Is(err, os.ErrExist) || errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("session %s is already in the store (%w)", id, os.ErrExist)
		}
		return fmt.Errorf("import session %s: %w", id, err)
	}
	return nil
}

// removeStaleImports removes the temporary folders of imports that were
// interrupted (the process was killed) more than a day ago.
func removeStaleImports(sessionsDir string) {
	ents, err := os.ReadDir(sessionsDir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), ".import-") {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > 24*time.Hour {
			os.RemoveAll(filepath.Join(sessionsDir, e.Name()))
		}
	}
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
	if err := ValidName(man.ID); err != nil {
		return man, fmt.Errorf("manifest: session id: %w", err)
	}
	seen := map[string]bool{}
	for _, f := range man.Files {
		if _, err := entryPath(man.ID+"/"+f.Path, man.ID); err != nil || f.Path == "" {
			return man, fmt.Errorf("manifest: file %q: unsafe path", f.Path)
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
		if err := ValidName(p); err != nil {
			return "", fmt.Errorf("unsafe file name %q", p)
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

// extractFile writes the entry's data to a new file dst (it must not
// exist) and sets its modification time.
func extractFile(dst string, r io.Reader, h *tar.Header) error {
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n != h.Size {
		err = fmt.Errorf("%d of %d bytes (truncated)", n, h.Size)
	}
	if err != nil {
		return err
	}
	if !h.ModTime.IsZero() {
		_ = os.Chtimes(dst, h.ModTime, h.ModTime)
	}
	return nil
}
