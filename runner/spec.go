package runner

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/gnnscope/gnnscope/profile/units"
)

// Spec is an experiment and its variants as read from a spec file.
type Spec struct {
	Experiment Experiment
	// Variants are the [variants.NAME] tables, in file order (empty when
	// the file has none: the built-in ones are used).
	Variants []Variant
	// Ablation runs the baseline, each optimization of the optimized
	// variant alone and optimized (AblationVariants) instead of Variants,
	// which it leaves empty.
	Ablation bool
}

// specFile is the TOML layout of a spec.
type specFile struct {
	Name     string                    `toml:"name"`
	Data     string                    `toml:"data"`
	NoCache  bool                      `toml:"no_cache"`
	Split    specSplit                 `toml:"split"`
	Train    map[string]any            `toml:"train"`
	Variants map[string]map[string]any `toml:"variants"`
	Repeats  *int64                    `toml:"repeats"`
	Ablation bool                      `toml:"ablation"`
	LogMax   string                    `toml:"log_max"`
}

// decodeErrRE matches the decoder's type errors.
var decodeErrRE = regexp.MustCompile(`^toml: line (\d+) \(last key ("[^"]*")\): (.*)$`)

// specSplit is the [split] table. (The TOML decoder would wrap a negative
// seed around into a uint64: it is decoded signed and checked.)
type specSplit struct {
	Mode      string  `toml:"mode"`
	PerClass  int     `toml:"per_class"`
	NumValid  int     `toml:"num_valid"`
	NumTest   int     `toml:"num_test"`
	TrainFrac float64 `toml:"train_frac"`
	ValidFrac float64 `toml:"valid_frac"`
	Seed      *int64  `toml:"seed"`
}

// specTopKeys are the keys and tables a spec may have at its top level.
var specTopKeys = []string{"name", "data", "no_cache", "repeats", "ablation", "log_max", "split", "train", "variants"}

// LoadSpec reads and checks a spec file (see ParseSpec).
func LoadSpec(path string) (*Spec, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	return ParseSpec(path, src)
}

// ParseSpec parses a spec in TOML; name is the file name used in errors.
//
//	name = "sage on synth-small"
//	data = "synth-small"           # dataset reference, as --data
//	repeats = 3                    # optional: runs of every variant, interleaved (as --repeats)
//	ablation = true                # optional: baseline, each optimization alone, optimized (as --ablation; no [variants])
//	[split]                        # optional: mode (auto, per-class, frac), per_class,
//	mode = "auto"                  # num_valid, num_test, train_frac, valid_frac, seed
//	[train]                        # any train.Config key (JSON names)
//	model = "sage"
//	fanouts = [15, 10]
//	[variants.baseline]            # no overrides
//	[variants.optimized]
//	sampler_workers = 2
//	[variants.mine]                # an external run: a command of the user's
//	cmd = "python3 train.py --workers 4"
//	env = { OMP_NUM_THREADS = "4" } # optional, over the launcher's environment
//	cwd = "trainers"               # optional, relative to where gnnscope run starts
//	auto = false                   # optional: no auto-instrumentation (--no-auto)
//	torch_profile = 10             # optional: capture 10 steps with torch.profiler (--torch-profile)
//	listen = "0.0.0.0:7000"        # optional: collect ranks on other machines (--listen)
//
// A spec whose variants all run commands needs no data. The base config
// is the model's defaults (train.Defaults; model "gcn" if [train] names
// none) with the [train] keys applied. A syntax error, an
// unknown key anywhere, a value of the wrong type, an invalid config or an
// invalid variant name is an error naming the file and, where known, the
// line.
func ParseSpec(name string, src []byte) (*Spec, error) {
	d := DefaultSplit()
	f := specFile{Split: specSplit{Mode: d.Mode, PerClass: d.PerClass, NumValid: d.NumValid, NumTest: d.NumTest, TrainFrac: d.TrainFrac, ValidFrac: d.ValidFrac}}
	md, err := toml.Decode(string(src), &f)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &decodeError{fmt.Sprintf("%s:%d: %s", name, pe.Position.Line, pe.Message), err}
		}
		// type errors read `toml: line N (last key "k"): ...`
		if m := decodeErrRE.FindStringSubmatch(err.Error()); m != nil {
			return nil, &decodeError{fmt.Sprintf("%s:%s: key %s: %s", name, m[1], m[2], m[3]), err}
		}
		return nil, &decodeError{name + ": " + strings.TrimPrefix(err.Error(), "toml: "), err}
	}
	for _, k := range md.Undecoded() {
		if k[0] == "train" || k[0] == "variants" {
			continue // their keys are checked as config keys below
		}
		return nil, fmt.Errorf("%s: unknown key %q (a spec has %s)", where(name, src, k), k.String(), strings.Join(specTopKeys, ", "))
	}
	// The decoder leaves a map empty when the TOML value is not a table.
	for _, k := range append([]toml.Key{{"split"}, {"train"}, {"variants"}}, variantKeys(md)...) {
		if typ := md.Type(k...); typ != "" && typ != "Hash" { // "": a table made by dotted keys
			return nil, fmt.Errorf("%s: %s must be a table ([%s]), found %s", where(name, src, k), k, k, strings.ToLower(typ))
		}
	}
	sp := f.Split
	exp := Experiment{Name: f.Name, Data: f.Data, NoCache: f.NoCache, Split: Split{
		Mode: sp.Mode, PerClass: sp.PerClass, NumValid: sp.NumValid, NumTest: sp.NumTest, TrainFrac: sp.TrainFrac, ValidFrac: sp.ValidFrac,
	}}
	if sp.Seed != nil {
		if *sp.Seed < 0 {
			return nil, fmt.Errorf("%s: split seed must be non-negative, got %d", where(name, src, toml.Key{"split", "seed"}), *sp.Seed)
		}
		seed := uint64(*sp.Seed)
		exp.Split.Seed = &seed
	}
	if f.Repeats != nil {
		if *f.Repeats < 1 || *f.Repeats > MaxRuns {
			return nil, fmt.Errorf("%s: repeats must be between 1 and %d, got %d", where(name, src, toml.Key{"repeats"}), MaxRuns, *f.Repeats)
		}
		exp.Repeats = int(*f.Repeats)
	}
	if f.LogMax != "" {
		n, err := units.ParseSize(f.LogMax)
		if err != nil || n < MinLogMax {
			return nil, fmt.Errorf("%s: log_max must be a size of at least %s, such as \"64MiB\", got %q", where(name, src, toml.Key{"log_max"}), units.Bytes(MinLogMax), f.LogMax)
		}
		exp.LogMax = n
	}
	spec := &Spec{Experiment: exp, Ablation: f.Ablation}
	if f.Ablation && len(variantKeys(md)) > 0 {
		return nil, fmt.Errorf("%s: ablation = true picks the variants itself: it goes without [variants] tables", where(name, src, toml.Key{"ablation"}))
	}
	var errs []error
	for _, k := range variantKeys(md) {
		v, err := specVariant(name, src, k[1], f.Variants[k[1]])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		spec.Variants = append(spec.Variants, v)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	engine := len(spec.Variants) == 0 || slices.ContainsFunc(spec.Variants, func(v Variant) bool { return v.External == nil })
	if engine && strings.TrimSpace(exp.Data) == "" {
		return nil, fmt.Errorf("%s: no dataset: set data = \"PRESET or FILE\"", name)
	}
	if err := exp.Split.Validate(); err != nil {
		return nil, fmt.Errorf("%s: [split]: %w", name, err)
	}
	if spec.Experiment.Train, err = ConfigFromKeys(f.Train, "gcn"); err != nil {
		return nil, fmt.Errorf("%s: [train]: %w", whereKeys(name, src, toml.Key{"train"}, err), err)
	}
	for _, v := range spec.Variants {
		if v.External != nil {
			continue
		}
		table := toml.Key{"variants", v.Name}
		if _, err := v.Apply(spec.Experiment.Train); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", whereKeys(name, src, table, err), err))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return spec, nil
}

// externalKeys are the keys of a [variants.NAME] table that runs a
// command.
var externalKeys = []string{"cmd", "env", "cwd", "auto", "torch_profile", "listen"}

// specVariant reads the [variants.NAME] table of a spec: overrides of the
// config, or, with a cmd key, an external command with its optional env
// (a table of strings), cwd, auto (a boolean; false = --no-auto) and
// torch_profile (training steps to capture with torch.profiler, as
// --torch-profile) and listen (HOST:PORT of a collector for ranks on
// other machines, as --listen).
func specVariant(file string, src []byte, name string, table map[string]any) (Variant, error) {
	key := toml.Key{"variants", name}
	at := func(k string) string { return where(file, src, append(append(toml.Key{}, key...), k)) }
	if err := checkVariantName(name); err != nil {
		return Variant{}, fmt.Errorf("%s: %w", where(file, src, key), err)
	}
	cmd, hasCmd := table["cmd"]
	if !hasCmd {
		for _, k := range externalKeys[1:] {
			if _, ok := table[k]; ok {
				return Variant{}, fmt.Errorf("%s: variant %q: key %q goes with cmd (a command to run)", at(k), name, k)
			}
		}
		return Variant{Name: name, Overrides: table}, nil
	}
	for _, k := range sortedAnyKeys(table) {
		if !slices.Contains(externalKeys, k) {
			return Variant{}, fmt.Errorf("%s: variant %q runs a command: key %q is not one of %s", at(k), name, k, strings.Join(externalKeys, ", "))
		}
	}
	line, ok := cmd.(string)
	if !ok {
		return Variant{}, fmt.Errorf("%s: variant %q: cmd must be a string", at("cmd"), name)
	}
	ext, err := NewExternal(line)
	if err != nil {
		return Variant{}, fmt.Errorf("%s: variant %q: %w", at("cmd"), name, err)
	}
	if env, ok := table["env"]; ok {
		m, ok := env.(map[string]any)
		if !ok {
			return Variant{}, fmt.Errorf("%s: variant %q: env must be a table of strings", at("env"), name)
		}
		ext.Env = map[string]string{}
		for k, val := range m {
			str, ok := val.(string)
			if !ok || k == "" || strings.ContainsAny(k, "=\x00") {
				return Variant{}, fmt.Errorf("%s: variant %q: env.%s must be a string variable", at("env"), name, k)
			}
			ext.Env[k] = str
		}
	}
	if cwd, ok := table["cwd"]; ok {
		if ext.Cwd, ok = cwd.(string); !ok || ext.Cwd == "" {
			return Variant{}, fmt.Errorf("%s: variant %q: cwd must be a folder name", at("cwd"), name)
		}
	}
	if auto, ok := table["auto"]; ok {
		b, ok := auto.(bool)
		if !ok {
			return Variant{}, fmt.Errorf("%s: variant %q: auto must be true or false", at("auto"), name)
		}
		ext.NoAuto = !b
	}
	if tp, ok := table["torch_profile"]; ok {
		n, ok := tp.(int64)
		if !ok || n < 0 || n > MaxTorchProfile {
			return Variant{}, fmt.Errorf("%s: variant %q: torch_profile must be a number of training steps from 0 to %d", at("torch_profile"), name, MaxTorchProfile)
		}
		ext.TorchProfile = int(n)
	}
	if l, ok := table["listen"]; ok {
		if ext.Listen, ok = l.(string); !ok {
			return Variant{}, fmt.Errorf("%s: variant %q: listen must be a string, HOST:PORT", at("listen"), name)
		}
		if err := CheckListen(ext.Listen); err != nil {
			return Variant{}, fmt.Errorf("%s: variant %q: %w", at("listen"), name, err)
		}
	}
	if ext.NoAuto && ext.TorchProfile > 0 {
		return Variant{}, fmt.Errorf("%s: variant %q: torch_profile needs the auto-instrumentation (auto = false turns it off)", at("torch_profile"), name)
	}
	return Variant{Name: name, External: ext}, nil
}

func sortedAnyKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// variantKeys returns the keys variants.NAME in file order.
func variantKeys(md toml.MetaData) []toml.Key {
	var out []toml.Key
	for _, k := range md.Keys() {
		if len(k) == 2 && k[0] == "variants" {
			out = append(out, k)
		}
	}
	return out
}

// where returns "name:line" for a key of the file, or name when the line
// is not found.
func where(name string, src []byte, key toml.Key) string {
	if line := keyLine(src, key); line > 0 {
		return name + ":" + strconv.Itoa(line)
	}
	return name
}

// whereKeys locates the first key a *KeyError names inside a table, else
// the table.
func whereKeys(name string, src []byte, table toml.Key, err error) string {
	var ke *KeyError
	if errors.As(err, &ke) && len(ke.Keys) > 0 {
		if line := keyLine(src, append(append(toml.Key{}, table...), ke.Keys[0])); line > 0 {
			return name + ":" + strconv.Itoa(line)
		}
	}
	return where(name, src, table)
}

// keyLine finds the line (1-based) where a key is set, following [table]
// headers and dotted keys; 0 if not found. It is a plain line scan, good
// enough to point at a key in an error message.
func keyLine(src []byte, key toml.Key) int {
	want := strings.Join(key, "\x00")
	var table []string
	for i, line := range strings.Split(string(src), "\n") {
		s := strings.TrimSpace(line)
		if s == "" || s[0] == '#' {
			continue
		}
		if strings.HasPrefix(s, "[") {
			h := strings.Trim(s, "[] \t")
			if j := strings.IndexByte(h, ']'); j >= 0 {
				h = h[:j]
			}
			table = splitKey(h)
			if strings.Join(table, "\x00") == want {
				return i + 1
			}
			continue
		}
		k, _, ok := strings.Cut(s, "=")
		if !ok {
			continue
		}
		full := append(append([]string{}, table...), splitKey(k)...)
		if strings.Join(full, "\x00") == want {
			return i + 1
		}
	}
	return 0
}

// splitKey splits a dotted TOML key, unquoting its parts.
func splitKey(s string) []string {
	parts := strings.Split(s, ".")
	for i, p := range parts {
		parts[i] = strings.Trim(strings.TrimSpace(p), `"'`)
	}
	return parts
}

// decodeError is the TOML decoder's error restated with the spec's name
// and line; it unwraps to the decoder's error.
type decodeError struct {
	msg string
	err error
}

func (e *decodeError) Error() string { return e.msg }
func (e *decodeError) Unwrap() error { return e.err }
