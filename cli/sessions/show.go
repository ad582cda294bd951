package sessions

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/profile/units"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

// ShowOptions are the inputs of `gnnscope sessions show`.
type ShowOptions struct {
	IO        *iostreams.IOStreams
	OpenStore func(root string) (*sessions.Store, error)

	Store   string
	Session string
	JSON    bool
}

// NewCmdShow returns `gnnscope sessions show`. With runF, the command
// calls it with the parsed options instead of showing.
func NewCmdShow(f *cmdutil.Factory, runF func(*ShowOptions) error) *cobra.Command {
	opts := &ShowOptions{IO: f.IOStreams, OpenStore: f.OpenStore}
	cmd := &cobra.Command{
		Use:   "show SESSION",
		Short: "Show a session: its experiment, the state of each run and the comparison table",
		Long: `Show one session: the experiment (dataset, model and the key training
settings, each variant's overrides), where it ran, the state of every run
(running, pending, ok, oom, failed, canceled, crashed, partial) with its
journal,
and the comparison table of 'gnnscope run --wait'.

--json prints {"session", "dir", "status", "imported", "runs", "comparison"}.`,
		Example: `  gnnscope sessions show last
  gnnscope sessions show 20261122-153045 --json`,
		Args: cmdutil.ExactArgs(1, "one SESSION: an id, a unique prefix of one, or last"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Store, _ = cmd.Flags().GetString("store")
			opts.Session = args[0]
			if runF != nil {
				return runF(opts)
			}
			return showRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

// Show is the JSON of `sessions show`.
type Show struct {
	Session    sessions.SessionMeta `json:"session"`
	Dir        string               `json:"dir"`
	Status     profile.Status       `json:"status"`
	Imported   *sessions.ImportInfo `json:"imported,omitempty"`
	Runs       []sessions.RunState  `json:"runs"`
	Comparison runner.Table         `json:"comparison"`
	Experiment *runner.Experiment   `json:"-"`
	Variants   []runner.Resolved    `json:"-"`
}

func showRun(opts *ShowOptions) error {
	store, err := opts.OpenStore(opts.Store)
	if err != nil {
		return err
	}
	s, err := cmdutil.GetSession(store, opts.Session)
	if err != nil {
		return err
	}
	v := Show{Session: s.Meta, Dir: s.Dir()}
	if v.Imported, err = s.ImportInfo(); err != nil {
		return err
	}
	if v.Runs, err = runner.RunStates(s); err != nil {
		return fmt.Errorf("session %s: %w", s.ID(), err)
	}
	if v.Comparison, err = runner.Compare(s); err != nil {
		return fmt.Errorf("session %s: %w", s.ID(), err)
	}
	statuses := make([]profile.Status, len(v.Runs))
	for i, r := range v.Runs {
		statuses[i] = r.Status
	}
	v.Status = runner.SessionStatus(statuses)
	if exp, resolved, err := runner.LoadSession(s); err == nil {
		v.Experiment, v.Variants = &exp, resolved
	}
	if opts.JSON {
		return opts.IO.WriteJSON(v)
	}
	return renderShow(opts.IO.Out, s, v)
}

// renderExperiment writes the dataset, model and training lines of an
// experiment.
func renderExperiment(w io.Writer, exp *runner.Experiment) {
	c := exp.Train
	split := exp.Split.Mode
	fmt.Fprintf(w, "data      %s (split %s)\n", exp.Data, split)
	model := fmt.Sprintf("%s, %d layers of %d", c.Model, c.Layers, c.Hidden)
	if c.Sampler == "neighbor" {
		model += fmt.Sprintf(", neighbor sampling (fanouts %s, batches of %d)", cmdutil.JoinInts(c.Fanouts), c.BatchSize)
	} else {
		model += ", full batch"
	}
	fmt.Fprintf(w, "model     %s\n", model)
	fmt.Fprintf(w, "training  %d epochs, lr %g, weight decay %g, dropout %g, seed %d, threads %d, eval every %d\n",
		c.Epochs, c.LR, c.WeightDecay, c.Dropout, c.Seed, c.Threads, c.EvalEvery)
}

func renderShow(w io.Writer, s *sessions.Session, v Show) error {
	m := s.Meta
	title := m.ID
	if m.Name != "" {
		title += "  " + m.Name
	}
	fmt.Fprintf(w, "session   %s\n", title)
	fmt.Fprintf(w, "created   %s\n", localTime(m.Created, "2006-01-02 15:04:05 MST"))
	if h := m.Host; h != nil {
		desc := []string{}
		for _, part := range []string{h.CPU, plural(h.Cores, "core"), h.GPU, h.OS} {
			if part != "" {
				desc = append(desc, part)
			}
		}
		name := h.Hostname
		if name == "" {
			name = "-"
		}
		fmt.Fprintf(w, "host      %s: %s\n", name, strings.Join(desc, ", "))
	}
	fmt.Fprintf(w, "folder    %s\n", s.Dir())
	fmt.Fprintf(w, "status    %s\n", v.Status)
	if ii := v.Imported; ii != nil {
		from := ii.Host
		if from == "" {
			from = "another machine"
		}
		fmt.Fprintf(w, "imported  %s, exported from %s %s\n", localTime(ii.Imported, "2006-01-02 15:04"), from, localTime(ii.Exported, "2006-01-02 15:04"))
	}
	if exp := v.Experiment; exp != nil {
		if exp.Data != "" { // external runs alone have no experiment
			renderExperiment(w, exp)
		}
		for i, r := range v.Variants {
			label := "variants"
			if i > 0 {
				label = ""
			}
			keys := make([]string, 0, len(r.Overrides))
			for k := range r.Overrides {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			over := make([]string, len(keys))
			for j, k := range keys {
				b, _ := json.Marshal(r.Overrides[k])
				over[j] = k + "=" + string(b)
			}
			if len(over) == 0 {
				over = []string{"(no overrides)"}
			}
			if r.External != nil {
				over = []string{"runs " + r.External.Cmd}
			}
			fmt.Fprintf(w, "%-8s  %s: %s\n", label, r.Name, strings.Join(over, " "))
		}
	} else if len(m.Spec) > 0 {
		fmt.Fprintf(w, "spec      %s\n", compactJSON(m.Spec))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTATUS\tPID\tJOURNAL\tLAST WRITE\tERROR")
	for _, r := range v.Runs {
		pid := "-"
		if r.Pid > 0 && r.Status == profile.StatusRunning {
			pid = fmt.Sprint(r.Pid)
		}
		size := "-"
		if r.Size > 0 {
			size = units.Bytes(r.Size)
		}
		mod := "-"
		if !r.Modified.IsZero() {
			mod = localTime(r.Modified, "2006-01-02 15:04:05")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Run, r.Status, pid, size, mod, cmdutil.OneLine(r.Error))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return v.Comparison.Render(w)
}

func plural(n int, what string) string {
	switch n {
	case 0:
		return ""
	case 1:
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func compactJSON(raw json.RawMessage) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	var v any
	if json.Unmarshal(raw, &v) != nil || enc.Encode(v) != nil {
		return string(raw)
	}
	return strings.TrimSpace(b.String())
}
