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

	"github.com/gnnscope/gnnscope/profile"
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
// import record of a session that was itself imported. Entries have mode
// 0600 (folders 0700), so a tar that extracts it keeps them private.
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

// Default limits of Import (ImportOptions); the limit of the files'
// total follows the archive's size (DefaultMaxExpansion).
const (
	DefaultMaxFiles     = 10000
	DefaultMaxFileBytes = 8 << 30 // 8 GiB
	maxManifestBytes    = 4 << 20
	maxDepth            = 8 // path components below the session folder
	maxTrailingBytes    = 1 << 20
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
		if r.Status == profile.StatusRunning {
			running[r.Run] = true
			rep.Running = append(rep.Running, r.Run)
		}
	}
	if len(running) > 0 && !opts.AllowRunning {
		return rep, fmt.Errorf("export session %s: %w: %s still running", id, ErrRunning, strings.Join(rep.Running, ", "))
	}
	dirs, files, err := s.exportFiles(running, &rep)
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

	if err := writeArchive(w, man, mb, dirs, files, &rep); err != nil {
		return rep, fmt.Errorf("export session %s: %w", id, err)
	}
	return rep, nil
}

// writeArchive writes the archive of man's session: the manifest mb, then
// the folders and files, counting the files in rep.
func writeArchive(w io.Writer, man Manifest, mb []byte, dirs []string, files []exportFile, rep *ExportReport) error {
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	hdr := func(name string, typ byte, size int64, mode int64, mod time.Time) *tar.Header {
		return &tar.Header{Typeflag: typ, Name: name, Size: size, Mode: mode, ModTime: mod, Format: tar.FormatPAX}
	}
	if err := tw.WriteHeader(hdr(ArchiveManifestName, tar.TypeReg, int64(len(mb)), 0o600, man.Exported)); err != nil {
		return err
	}
	if _, err := tw.Write(mb); err != nil {
		return err
	}
	if err := tw.WriteHeader(hdr(man.ID+"/", tar.TypeDir, 0, 0o700, man.Exported)); err != nil {
		return err
	}
	for _, d := range dirs {
		if err := tw.WriteHeader(hdr(man.ID+"/"+d+"/", tar.TypeDir, 0, 0o700, man.Exported)); err != nil {
			return err
		}
	}
	for _, f := range files {
		if err := copyInto(tw, hdr(man.ID+"/"+f.rel, tar.TypeReg, f.size, 0o600, f.mod), f.abs); err != nil {
			return fmt.Errorf("%s: %w", f.rel, err)
		}
		rep.Files++
		rep.Bytes += f.size
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// exportFiles lists the folders and files of the session folder that an
// archive holds (see ArchiveFormat), with journals of running runs cut at
// their last complete line; files it cannot hold go to rep.Skipped.
func (s *Session) exportFiles(running map[string]bool, rep *ExportReport) (dirs []string, files []exportFile, err error) {
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
			if journalOfRunning(rel, running) {
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
	return dirs, files, err
}

// journalOfRunning reports whether rel is the journal of a running run
// in runs/, a distributed run's rank journals included.
func journalOfRunning(rel string, running map[string]bool) bool {
	run, ok := strings.CutSuffix(rel, journalExt)
	if !ok || path.Dir(rel) != "runs" {
		return false
	}
	run = strings.TrimPrefix(run, "runs/")
	if base, _, ok := SplitRankRun(run); ok {
		run = base
	}
	return running[run]
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
// complete archive or untouched. The archive is private to its owner:
// mode 0600.
func (s *Session) ExportFile(p string, opts ExportOptions) (ExportReport, error) {
	rep := ExportReport{ID: s.ID()}
	var exportErr error
	err := WriteFileAtomic(p, 0o600, func(w io.Writer) error {
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
