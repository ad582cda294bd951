package sessions

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/profile/units"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

// ExportOptions are the inputs of `gnnscope sessions export`.
type ExportOptions struct {
	IO        *iostreams.IOStreams
	OpenStore func(root string) (*sessions.Store, error)

	Store   string
	Session string
	Output  string
	Force   bool
	JSON    bool
}

// NewCmdExport returns `gnnscope sessions export`. With runF, the command
// calls it with the parsed options instead of exporting.
func NewCmdExport(f *cmdutil.Factory, runF func(*ExportOptions) error) *cobra.Command {
	opts := &ExportOptions{IO: f.IOStreams, OpenStore: f.OpenStore}
	cmd := &cobra.Command{
		Use:   "export SESSION [-o FILE]",
		Short: "Write a session to one archive file (.tar.gz) to import elsewhere",
		Long: `Write a session to one archive file: a gzip-compressed tar holding a small
manifest (format version, session id, files and sizes) and the session
folder (session.json, launch.json, every run's journal and log). Pid files
are left out. Any tar lists it: tar tzf FILE.

The default FILE is ID.tar.gz in the current folder; -o - writes to stdout.
The file is written through a temporary file and a rename, so it is either
complete or not there, with mode 0600: only its owner can read it.

An existing FILE is refused, and a session that is still running (or has
runs waiting to start) too: its journals are being written. --force
overwrites FILE and exports a running session anyway, each journal up to
its last complete line; the imported copy shows those runs as crashed.
Missing folders of FILE are created.`,
		Example: `  gnnscope sessions export last
  gnnscope sessions export 20261122-153045-ab12 -o cora-sage.tar.gz
  gnnscope sessions export last -o - | ssh laptop gnnscope sessions import -`,
		Args: cmdutil.ExactArgs(1, "one SESSION to export"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Store, _ = cmd.Flags().GetString("store")
			opts.Session = args[0]
			if runF != nil {
				return runF(opts)
			}
			return exportRun(opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "archive `FILE` (default ID.tar.gz; - for stdout)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "overwrite FILE, or export a running session")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print what was exported as JSON (not with -o -)")
	return cmd
}

func exportRun(opts *ExportOptions) error {
	out := opts.Output
	store, err := opts.OpenStore(opts.Store)
	if err != nil {
		return err
	}
	s, err := cmdutil.GetSession(store, opts.Session)
	if err != nil {
		return err
	}
	states, err := runner.RunStates(s)
	if err != nil {
		return fmt.Errorf("session %s: %w", s.ID(), err)
	}
	if runner.Active(states) && !opts.Force {
		return fmt.Errorf("session %s is still running: its journals are being written (export with --force to take them as they are, or cancel it: gnnscope run --cancel %s)", s.ID(), s.ID())
	}
	warnLargeLogs(opts.IO.ErrOut, s)
	eopts := sessions.ExportOptions{AllowRunning: opts.Force}
	var rep sessions.ExportReport
	if out == "-" {
		if opts.JSON {
			return errors.New("--json does not go with -o - (the archive goes to stdout)")
		}
		w := opts.IO.Out
		if opts.IO.IsStdoutTTY() {
			return errors.New("not writing an archive to a terminal: give -o FILE, or redirect stdout")
		}
		if rep, err = s.Export(w, eopts); err != nil {
			return err
		}
	} else {
		if out == "" {
			out = s.ID() + ".tar.gz"
		}
		err := cmdutil.WriteFile(out, opts.Force, 0o600, func(w io.Writer) error {
			var err error
			rep, err = s.Export(w, eopts)
			return err
		})
		if err != nil && !strings.HasPrefix(err.Error(), "export session") {
			err = fmt.Errorf("export session %s to %s: %w", s.ID(), out, err)
		}
		if err != nil {
			return err
		}
	}
	if opts.JSON {
		return opts.IO.WriteJSON(struct {
			sessions.ExportReport
			File string `json:"file"`
		}{rep, out})
	}
	errw := opts.IO.ErrOut
	for _, sk := range rep.Skipped {
		fmt.Fprintf(errw, "left out %s\n", sk)
	}
	if len(rep.Running) > 0 {
		fmt.Fprintf(errw, "runs still running, exported up to their last complete line: %s\n", strings.Join(rep.Running, ", "))
	}
	dest := out
	if out == "-" {
		dest = "stdout"
	}
	fmt.Fprintf(errw, "exported session %s (%d files, %s) to %s\n", s.ID(), rep.Files, units.Bytes(rep.Bytes), dest)
	return nil
}

// warnLargeLogs says which logs of the session are over the default log
// cap (runner.DefaultLogMax): the archive carries them, and an import
// may refuse it as too large for its size unless --max-size.
func warnLargeLogs(w io.Writer, s *sessions.Session) {
	logs, _ := filepath.Glob(filepath.Join(s.RunsDir(), "*.log"))
	logs = append(logs, filepath.Join(s.Dir(), "sequencer.log"))
	for _, p := range logs {
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() <= runner.DefaultLogMax {
			continue
		}
		rel, _ := filepath.Rel(s.Dir(), p)
		fmt.Fprintf(w, "warning: %s is %s: the archive carries it whole, and logs compress so well that an import may refuse the archive as too large (sessions import --max-size lets it in)\n", rel, units.Bytes(fi.Size()))
	}
}

// ImportOptions are the inputs of `gnnscope sessions import`.
type ImportOptions struct {
	IO        *iostreams.IOStreams
	OpenStore func(root string) (*sessions.Store, error)

	Store string
	File  string
	Force bool
	JSON  bool
	// MaxSize, if set, replaces the size limit (a size: 2GiB).
	MaxSize string
}

// NewCmdImport returns `gnnscope sessions import`. With runF, the command
// calls it with the parsed options instead of importing.
func NewCmdImport(f *cmdutil.Factory, runF func(*ImportOptions) error) *cobra.Command {
	opts := &ImportOptions{IO: f.IOStreams, OpenStore: f.OpenStore}
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Add a session from an archive made by 'sessions export'",
		Long: `Add the session in an archive made by 'gnnscope sessions export' to the
store (--store, else $GNNSCOPE_HOME, else the XDG data folder). FILE - reads
stdin.

The archive is checked before anything is added: it must hold exactly one
session folder of regular files and folders with safe names, as its
manifest lists them. Absolute paths, "..", links, devices, duplicate or
unlisted entries, files over the size limits and damaged or truncated files
are refused. It is extracted into a temporary folder inside the store and
renamed into place, so a refused or failed import leaves nothing behind;
the folder of an import that was killed is removed by the next import.
The imported files are private: mode 0600, folders 0700.

Size limit: the files may add up to at most 100 times the archive's
compressed size, at least 64 MiB and at most 32 GiB (exported sessions
compress 6-8 times). An archive over it is refused as it is extracted; one
read from stdin is held to 100 times what was read of it so far. A failure
to write the files (a full disk, a read-only store) says "writing to
store", not that the archive is at fault.

An existing session with the same id is not replaced unless --force (and
never while it is running). Runs of the imported session read their status
from their journals; one without an end (it was still running when it was
exported, or it crashed) reads as crashed. A session whose id is not of
the form gnnscope makes (yyyymmdd-hhmmss-xxxx) gets a new id, and the
import says so: "last" and the like never name an imported session.

--max-size SIZE replaces the size limit, for an archive you trust (a
session whose trainer printed a large log).`,
		Example: `  gnnscope sessions import cora-sage.tar.gz
  gnnscope sessions import --store /data/gnnscope cora-sage.tar.gz
  ssh gpu-box gnnscope sessions export last -o - | gnnscope sessions import -`,
		Args: cmdutil.ExactArgs(1, "one FILE: an archive that sessions export wrote"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Store, _ = cmd.Flags().GetString("store")
			opts.File = args[0]
			if runF != nil {
				return runF(opts)
			}
			return importRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace an existing session with the same id")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print what was imported as JSON")
	cmd.Flags().StringVar(&opts.MaxSize, "max-size", "", "let the files add up to `SIZE` (e.g. 2GiB) whatever the archive's size: for an archive you trust")
	return cmd
}

func importRun(opts *ImportOptions) error {
	file, force := opts.File, opts.Force
	store, err := opts.OpenStore(opts.Store)
	if err != nil {
		return err
	}
	iopts := sessions.ImportOptions{Replace: force, CanReplace: func(old *sessions.Session) error {
		states, err := runner.RunStates(old)
		if err != nil {
			return err
		}
		if runner.Active(states) {
			return fmt.Errorf("it is running (cancel it first: gnnscope run --cancel %s)", old.ID())
		}
		return nil
	}, Check: runner.CheckImport}
	if opts.MaxSize != "" {
		n, err := units.ParseSize(opts.MaxSize)
		if err != nil || n <= 0 {
			return fmt.Errorf("--max-size %q: a size such as 2GiB", opts.MaxSize)
		}
		iopts.MaxTotalBytes, iopts.MaxFileBytes, iopts.MaxExpansion = n, n, -1
	}
	var s *sessions.Session
	var rep sessions.ImportReport
	if file == "-" {
		s, rep, err = store.Import(opts.IO.In, iopts)
		if err != nil {
			err = fmt.Errorf("import from stdin: %w", err)
		}
	} else {
		s, rep, err = store.ImportFile(file, iopts)
	}
	if err != nil {
		if errors.Is(err, os.ErrExist) && !force {
			return fmt.Errorf("%w; pass --force to replace it", err)
		}
		if errors.Is(err, sessions.ErrArchiveTooLarge) && opts.MaxSize == "" {
			return fmt.Errorf("%w (if you trust the archive: --max-size SIZE)", err)
		}
		return err
	}
	if rep.RenamedFrom != "" {
		fmt.Fprintf(opts.IO.ErrOut, "the archive's session id %q is not one gnnscope makes: imported as %s\n", rep.RenamedFrom, rep.ID)
	}
	states, serr := runner.RunStates(s)
	if opts.JSON {
		return opts.IO.WriteJSON(struct {
			sessions.ImportReport
			Runs []sessions.RunState `json:"runs"`
		}{rep, states})
	}
	out := opts.IO.Out
	verb := "imported"
	if rep.Replaced {
		verb = "replaced"
	}
	title := s.ID()
	if s.Meta.Name != "" {
		title += " (" + s.Meta.Name + ")"
	}
	fmt.Fprintf(out, "%s session %s: %d files, %s\nfolder %s\n", verb, title, rep.Files, units.Bytes(rep.Bytes), s.Dir())
	for _, r := range states {
		fmt.Fprintf(out, "  %-16s %s\n", r.Run, r.Status)
	}
	return serr
}
