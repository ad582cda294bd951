package trainflags

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/train"
	"github.com/gnnscope/gnnscope/profile/units"
	"github.com/gnnscope/gnnscope/runner"
)

// Flags are the values of the experiment flags as given. Cfg receives the
// flags that are training config keys; Config turns them into the config a
// run uses.
type Flags struct {
	// DefaultModel is the model when --model is not given (gcn for train,
	// sage for run); the defaults shown in the help are its.
	DefaultModel string

	Data    string
	NoCache bool
	Cfg     train.Config
	Fanout  string

	Split     string
	SplitSeed uint64
	PerClass  int
	NumValid  int
	NumTest   int
	TrainFrac float64
	ValidFrac float64

	// Changed names the flags set on the command line (see Parsed).
	Changed map[string]bool
	// flags is the parsed flag set (see Parsed).
	flags *pflag.FlagSet
}

// followModel names the flags whose default is the chosen model's (see
// train.Defaults): left unset, they are left to runner.ConfigFromKeys.
// Every other config flag passes its value, set or default.
var followModel = map[string]bool{
	"layers": true, "hidden": true, "epochs": true, "patience": true, "select": true,
	"lr": true, "weight-decay": true, "wd-out": true, "wd-conv": true, "clip-norm": true,
	"dropout": true, "heads": true, "attn-dropout": true, "act": true, "alpha": true,
	"theta": true, "sampler": true, "fanout": true, "batch-size": true,
}

// flagKeyExceptions names the flags whose config key is not the flag's
// name with dashes turned into underscores.
var flagKeyExceptions = map[string]string{"fanout": "fanouts", "act": "activation"}

// ConfigKey returns the train config key a flag sets, or "" when the flag
// is not a config key (--data, --split, --json ...).
func ConfigKey(name string) string {
	key, ok := flagKeyExceptions[name]
	if !ok {
		key = strings.ReplaceAll(name, "-", "_")
	}
	if !slices.Contains(runner.ConfigKeys(), key) {
		return ""
	}
	return key
}

// Parsed records the parsed flag set fl and which of its flags were set on
// the command line; Keys, Config and Experiment need it.
func (f *Flags) Parsed(fl *pflag.FlagSet) {
	f.flags = fl
	f.Changed = map[string]bool{}
	fl.Visit(func(flag *pflag.Flag) { f.Changed[flag.Name] = true })
}

// configValues returns every field of cfg by its config key, zero values
// included (the JSON form omits some of those).
func configValues(cfg train.Config) map[string]any {
	v := reflect.ValueOf(cfg)
	t := v.Type()
	out := make(map[string]any, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" || !t.Field(i).IsExported() {
			continue
		}
		out[name] = v.Field(i).Interface()
	}
	return out
}

// Keys returns the config keys the flags set: with all, every config flag
// but the unset ones that follow the model; otherwise only the flags set
// on the command line (overrides of a spec).
func (f *Flags) Keys(all bool) (map[string]any, error) {
	if f.flags == nil {
		return nil, errors.New("training flags not parsed")
	}
	values := configValues(f.Cfg)
	keys := map[string]any{}
	var err error
	f.flags.VisitAll(func(flag *pflag.Flag) {
		key := ConfigKey(flag.Name)
		set := f.Changed[flag.Name]
		if key == "" || err != nil || !(set || all && !followModel[flag.Name]) {
			return
		}
		if flag.Name == "fanout" {
			fan, ferr := cmdutil.ParseInts(f.Fanout)
			if ferr != nil {
				err = fmt.Errorf("--fanout: %w", ferr)
				return
			}
			keys[key] = fan
			return
		}
		if flag.Name == "features" && f.Cfg.FeatureStore != "" {
			keys["feature_store"] = f.Cfg.FeatureStore
		}
		keys[key] = values[key]
	})
	return keys, err
}

// scope returns the settings that decide which flags a run uses (see
// flagScopes), before any value is checked: the model, its sampler (the
// model's default unless --sampler is given) and the sampler workers.
func (f *Flags) scope() train.Config {
	c := train.Defaults(f.Cfg.Model)
	if f.Changed["sampler"] {
		c.Sampler = f.Cfg.Sampler
	}
	c.SamplerWorkers = f.Cfg.SamplerWorkers
	return c
}

// Config returns the training config of the flags: runner.ConfigFromKeys
// of their keys, so that unset hyper-parameters take the chosen model's
// defaults. A flag set for a run that ignores it is refused first; an
// invalid value is reported as Experiment.Validate words it.
func (f *Flags) Config() (train.Config, error) { return f.config(nil) }

// config is Config with a check run after the flags' own checks and
// before the config's: Experiment checks the dataset and the split there,
// so that errors come in the order they always came.
func (f *Flags) config(before func() error) (train.Config, error) {
	keys, err := f.Keys(true)
	if err != nil {
		return train.Config{}, err
	}
	if err := f.checkApply(f.scope()); err != nil {
		return train.Config{}, err
	}
	if before != nil {
		if err := before(); err != nil {
			return train.Config{}, err
		}
	}
	cfg, err := runner.ConfigFromKeys(keys, f.DefaultModel)
	var ke *runner.KeyError
	if errors.As(err, &ke) {
		return cfg, fmt.Errorf("experiment: %w", ke.Err)
	}
	return cfg, err
}

// Experiment returns the experiment of the flags: the dataset, the split
// and Config, validated.
func (f *Flags) Experiment() (runner.Experiment, error) {
	exp := runner.Experiment{Data: f.Data, NoCache: f.NoCache, Split: f.ApplySplit(runner.DefaultSplit())}
	cfg, err := f.config(func() error {
		// The dataset and the split, beside a config known to be valid.
		probe := exp
		probe.Train = train.Defaults(nn.Kind(f.DefaultModel))
		return probe.Validate()
	})
	if err != nil {
		return exp, err
	}
	exp.Train = cfg
	return exp, exp.Validate()
}

// ApplySplit applies the split flags set on the command line to s. An
// unset --split-seed leaves s.Seed as it is: the split then follows the
// training seed (see runner.Experiment.SplitSeed).
func (f *Flags) ApplySplit(s runner.Split) runner.Split {
	if f.Changed["split"] {
		s.Mode = f.Split
	}
	if f.Changed["split-seed"] {
		seed := f.SplitSeed
		s.Seed = &seed
	}
	if f.Changed["per-class"] {
		s.PerClass = f.PerClass
	}
	if f.Changed["num-valid"] {
		s.NumValid = f.NumValid
	}
	if f.Changed["num-test"] {
		s.NumTest = f.NumTest
	}
	if f.Changed["train-frac"] {
		s.TrainFrac = f.TrainFrac
	}
	if f.Changed["valid-frac"] {
		s.ValidFrac = f.ValidFrac
	}
	return s
}

// flagScopes names the flags that apply only to some samplers or models:
// set on the command line for a run they do not apply to, they would be
// ignored without a word, so checkApply refuses them.
var flagScopes = []struct {
	flags []string
	what  string                  // the runs they apply to, for the message
	apply func(train.Config) bool // whether they apply to a config
}{
	{[]string{"parts", "parts-per-batch", "part-balance"}, "--sampler gas",
		func(c train.Config) bool { return c.Sampler == "gas" }},
	{[]string{"fanout", "batch-size", "sampler-device"}, "--sampler neighbor",
		func(c train.Config) bool { return c.Sampler == "neighbor" }},
	{[]string{"heads", "attn-dropout"}, "--model gat",
		func(c train.Config) bool { return c.Model == "gat" }},
	{[]string{"alpha"}, "--model appnp or gcnii",
		func(c train.Config) bool { return c.Model == "appnp" || c.Model == "gcnii" }},
	{[]string{"theta"}, "--model gcnii",
		func(c train.Config) bool { return c.Model == "gcnii" }},
	{[]string{"cache-bytes", "cache-policy"}, "--sampler neighbor or gas",
		func(c train.Config) bool { return c.Sampler == "neighbor" || c.Sampler == "gas" }},
	{[]string{"prefetch"}, "--sampler-workers N (N > 0)",
		func(c train.Config) bool { return c.SamplerWorkers > 0 }},
}

// checkApply returns an error naming every flag set on the command line
// that cfg does not use (say --parts without --sampler gas).
func (f *Flags) checkApply(cfg train.Config) error {
	var bad []string
	for _, sc := range flagScopes {
		if sc.apply(cfg) {
			continue
		}
		for _, name := range sc.flags {
			if f.flags.Lookup(name) != nil && f.Changed[name] {
				bad = append(bad, fmt.Sprintf("--%s applies to %s only", name, sc.what))
			}
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%s (this run: --model %s --sampler %s); leave the flag out or change the run",
		strings.Join(bad, "; "), cfg.Model, cfg.Sampler)
}

// sizeFlag is a byte-count flag that accepts sizes such as 512MiB.
type sizeFlag memory.Size

func (s *sizeFlag) String() string { return strconv.FormatInt(int64(*s), 10) }

func (s *sizeFlag) Set(v string) error {
	n, err := units.ParseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}

func (s *sizeFlag) Type() string { return "size" }

// optFloatFlag is a float flag that leaves its target nil until set.
type optFloatFlag struct{ p **float64 }

func (o optFloatFlag) String() string {
	if o.p == nil || *o.p == nil {
		return ""
	}
	return strconv.FormatFloat(**o.p, 'g', -1, 64)
}

func (o optFloatFlag) Set(v string) error {
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return err
	}
	*o.p = &x
	return nil
}

func (o optFloatFlag) Type() string { return "float" }
