package exporter

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

// Kind is a kind of file the exporter writes.
type Kind int

// The kinds, in the order the dialog lists them.
const (
	Markdown Kind = iota // the comparison as a GitHub table
	CSV                  // the comparison, one record per run
	LaTeX                // the comparison as a tabular environment
	Trace                // a Chrome Trace Event file of the runs
	Archive              // the session as one archive file (one session only)
)

// Kinds lists every kind.
var Kinds = []Kind{Markdown, CSV, LaTeX, Trace, Archive}

// String names the kind as the dialog shows it.
func (k Kind) String() string {
	switch k {
	case Markdown:
		return "Markdown table"
	case CSV:
		return "CSV"
	case LaTeX:
		return "LaTeX tabular"
	case Trace:
		return "Chrome trace"
	case Archive:
		return "Session archive"
	}
	return fmt.Sprintf("kind %d", int(k))
}

// FileName is the kind's file name in the export folder, after the
// prefix that names what was exported (see Request.Prefix); "" for
// Archive, which has a path of its own.
func (k Kind) FileName(prefix string) string {
	var name string
	switch k {
	case Markdown:
		name = "compare.md"
	case CSV:
		name = "compare.csv"
	case LaTeX:
		name = "compare.tex"
	case Trace:
		name = "trace.json"
	default:
		return ""
	}
	if prefix == "" {
		return name
	}
	return prefix + "-" + name
}

// ExistsError is what Write returns, having written nothing, when files
// it would write exist and Request.Overwrite is not set.
type ExistsError struct {
	Paths []string
}

func (e *ExistsError) Error() string {
	return byFolder(e.Paths) + " already there"
}

// Request is what to export.
type Request struct {
	// Refs are the runs of the comparison and the trace.
	Refs []sessions.RunRef
	// Comparison, if set, is the comparison of Refs already computed.
	Comparison *sessions.Comparison
	// Kinds are the files to write.
	Kinds []Kind
	// Dir is the folder of the comparison files and the trace.
	Dir string
	// Session and ArchivePath: the session to archive and where.
	Session     *sessions.Session
	ArchivePath string
	// Overwrite replaces files that exist; without it Write writes
	// nothing when one does (ExistsError).
	Overwrite bool
}

// Prefix names what the comparison files and the trace hold: the
// session id of the runs, or of the first with "-and-N-more" when they
// come from several sessions.
func (r Request) Prefix() string {
	var ids []string
	for _, ref := range r.Refs {
		if id := ref.Session.ID(); !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	switch len(ids) {
	case 0:
		if r.Session != nil {
			return r.Session.ID()
		}
		return ""
	case 1:
		return ids[0]
	}
	return fmt.Sprintf("%s-and-%d-more", ids[0], len(ids)-1)
}

// Path is where Write writes kind k ("" for a kind it does not know).
func (r Request) Path(k Kind) string {
	if k == Archive {
		return r.ArchivePath
	}
	if name := k.FileName(r.Prefix()); name != "" {
		return filepath.Join(r.Dir, name)
	}
	return ""
}

// existing lists the files of the request that exist already.
func (r Request) existing() []string {
	var out []string
	for _, k := range r.Kinds {
		if p := r.Path(k); strings.TrimSpace(p) != "" {
			if _, err := os.Lstat(p); err == nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// Write writes the requested files and returns their paths, in the order
// of Kinds. It writes each file through a temporary file renamed once
// complete, creating missing folders, and goes on after a failure,
// reporting every error. When a file exists and req.Overwrite is not
// set, it writes nothing and returns an *ExistsError.
func Write(req Request) ([]string, error) {
	if ex := req.existing(); len(ex) > 0 && !req.Overwrite {
		return nil, &ExistsError{Paths: ex}
	}
	var wrote []string
	var errs []error
	needCompare := false
	for _, k := range req.Kinds {
		if k == Markdown || k == CSV || k == LaTeX {
			needCompare = true
		}
	}
	c := req.Comparison
	if needCompare && c == nil {
		if len(req.Refs) == 0 {
			return nil, errors.New("export: no runs to compare")
		}
		var err error
		if c, err = runner.CompareRuns(req.Refs, sessions.CompareOptions{Waterfall: runner.WaterfallOptions()}); err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
	}
	for _, k := range req.Kinds {
		var path string
		var err error
		switch k {
		case Markdown, CSV, LaTeX:
			path = req.Path(k)
			if strings.TrimSpace(req.Dir) == "" {
				err = errors.New("no folder given")
				break
			}
			format := map[Kind]string{Markdown: sessions.FormatMarkdown, CSV: sessions.FormatCSV, LaTeX: sessions.FormatLaTeX}[k]
			err = writeFile(path, func(w io.Writer) error { return c.Write(w, format) })
		case Trace:
			path = req.Path(k)
			if strings.TrimSpace(req.Dir) == "" {
				err = errors.New("no folder given")
				break
			}
			err = writeTrace(path, req.Refs)
		case Archive:
			path, err = writeArchive(req.Session, req.ArchivePath)
		default:
			err = fmt.Errorf("unknown kind %d", int(k))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k, err))
			continue
		}
		wrote = append(wrote, path)
	}
	if len(errs) > 0 {
		return wrote, fmt.Errorf("export: %w", errors.Join(errs...))
	}
	return wrote, nil
}

// Summary says what an export wrote in one line: the files by name,
// folder by folder ("wrote compare.md, trace.json in DIR; ID.tar.gz in
// DIR2").
func Summary(wrote []string) string {
	if len(wrote) == 0 {
		return "wrote nothing"
	}
	return "wrote " + byFolder(wrote)
}

// byFolder names files by name, folder by folder ("compare.md, trace.json
// in DIR; ID.tar.gz in DIR2").
func byFolder(paths []string) string {
	var groups []string
	var names []string
	dir := filepath.Dir(paths[0])
	for _, p := range paths {
		if d := filepath.Dir(p); d != dir {
			groups = append(groups, strings.Join(names, ", ")+" in "+dir)
			dir, names = d, nil
		}
		names = append(names, filepath.Base(p))
	}
	groups = append(groups, strings.Join(names, ", ")+" in "+dir)
	return strings.Join(groups, "; ")
}

// writeFile writes path through a temporary file in the same folder,
// creating the folder when it is missing (Write has checked for existing
// files already).
func writeFile(path string, write func(io.Writer) error) error {
	if err := sessions.PrepareOutput(path, true); err != nil {
		return err
	}
	return sessions.WriteFileAtomic(path, 0o666, write)
}

// writeTrace writes the runs' journals as one Chrome trace, every run
// starting at zero (as `gnnscope export trace` without --wall-clock).
// Runs without a journal are left out; none at all is an error.
func writeTrace(path string, refs []sessions.RunRef) error {
	tr, _, err := sessions.BuildTrace(refs, sessions.TraceOptions{})
	if err != nil {
		return err
	}
	return writeFile(path, func(w io.Writer) error {
		_, err := tr.WriteTo(w)
		return err
	})
}

// writeArchive exports the session to path; the archive may not go inside
// the session's own folder (it would archive itself). A session with runs
// still running is exported up to their last complete journal line.
func writeArchive(s *sessions.Session, path string) (string, error) {
	if s == nil {
		return "", errors.New("an archive holds one session: select one")
	}
	if strings.TrimSpace(path) == "" {
		return "", errors.New("no archive path given")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	dir, err := filepath.Abs(s.Dir())
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(dir, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is inside the session's folder; write the archive elsewhere", path)
	}
	if err := sessions.PrepareOutput(abs, true); err != nil {
		return "", err
	}
	if _, err := s.ExportFile(abs, sessions.ExportOptions{AllowRunning: true}); err != nil {
		return "", err
	}
	return abs, nil
}
