package exporter

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// FileName is the kind's file name in the export folder ("" for Archive,
// which has a path of its own).
func (k Kind) FileName() string {
	switch k {
	case Markdown:
		return "compare.md"
	case CSV:
		return "compare.csv"
	case LaTeX:
		return "compare.tex"
	case Trace:
		return "trace.json"
	}
	return ""
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
}

// Write writes the requested files and returns their paths, in the order
// of Kinds. It writes each file through a temporary file renamed once
// complete, and goes on after a failure, reporting every error.
func Write(req Request) ([]string, error) {
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
		if c, err = runner.CompareRuns(req.Refs, sessions.CompareOptions{}); err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
	}
	for _, k := range req.Kinds {
		var path string
		var err error
		switch k {
		case Markdown, CSV, LaTeX:
			path = filepath.Join(req.Dir, k.FileName())
			format := map[Kind]string{Markdown: sessions.FormatMarkdown, CSV: sessions.FormatCSV, LaTeX: sessions.FormatLaTeX}[k]
			err = writeFile(path, func(w io.Writer) error { return c.Write(w, format) })
		case Trace:
			path = filepath.Join(req.Dir, k.FileName())
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
	var groups []string
	var names []string
	dir := filepath.Dir(wrote[0])
	for _, p := range wrote {
		if d := filepath.Dir(p); d != dir {
			groups = append(groups, strings.Join(names, ", ")+" in "+dir)
			dir, names = d, nil
		}
		names = append(names, filepath.Base(p))
	}
	groups = append(groups, strings.Join(names, ", ")+" in "+dir)
	return "wrote " + strings.Join(groups, "; ")
}

// checkDir makes sure the export folder exists.
func checkDir(dir string) error {
	if strings.TrimSpace(dir) == "" {
		return errors.New("no folder given")
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", dir)
	}
	return nil
}

// writeFile writes path through a temporary file in the same folder.
func writeFile(path string, write func(io.Writer) error) error {
	if err := checkDir(filepath.Dir(path)); err != nil {
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
	if err := checkDir(filepath.Dir(abs)); err != nil {
		return "", err
	}
	if _, err := s.ExportFile(abs, sessions.ExportOptions{AllowRunning: true}); err != nil {
		return "", err
	}
	return abs, nil
}
