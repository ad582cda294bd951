package synth

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxFeatures is the largest feature width a preset reference may set.
// Real node-classification datasets stay far below it (ogbn-products has
// 100 features, Reddit 602, CiteSeer 3703).
const MaxFeatures = 1 << 16

// ParseRef reads a preset reference: a preset name, optionally followed
// by ":" and comma-separated settings KEY=VALUE. The one setting is
// features=N, the feature width, which replaces the preset's (the
// graph, the labels and the split do not depend on it). ok is false
// when ref names no preset (the part before ":" is not a preset's
// name); err is set when it does but a setting is wrong.
//
// The preset returned has the reference's canonical form as its Name and
// Config.Name: the preset's name, followed by ":features=N" when N is not
// the preset's own width, so that equal datasets get equal names.
func ParseRef(ref string) (p Preset, ok bool, err error) {
	name, settings, hasSettings := strings.Cut(ref, ":")
	p, ok = Lookup(name)
	if !ok {
		return Preset{}, false, nil
	}
	if !hasSettings {
		return p, true, nil
	}
	if settings == "" {
		return Preset{}, true, fmt.Errorf("dataset %s: nothing after %q; want %s:features=N", ref, ":", name)
	}
	seen := map[string]bool{}
	for _, kv := range strings.Split(settings, ",") {
		key, value, found := strings.Cut(kv, "=")
		key = strings.TrimSpace(key)
		if !found {
			return Preset{}, true, fmt.Errorf("dataset %s: setting %q is not KEY=VALUE; want %s:features=N", ref, kv, name)
		}
		if seen[key] {
			return Preset{}, true, fmt.Errorf("dataset %s: %s set twice", ref, key)
		}
		seen[key] = true
		switch key {
		case "features":
			f, err := parseFeatures(strings.TrimSpace(value))
			if err != nil {
				return Preset{}, true, fmt.Errorf("dataset %s: %w", ref, err)
			}
			p.Config.Features = f
		default:
			return Preset{}, true, fmt.Errorf("dataset %s: unknown setting %q; a preset takes features=N", ref, key)
		}
	}
	return canonical(p), true, nil
}

// parseFeatures reads a feature width in [1, MaxFeatures].
func parseFeatures(s string) (int, error) {
	f, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("features=%q: not a whole number", s)
	}
	if f < 1 || f > MaxFeatures {
		return 0, fmt.Errorf("features=%d: want 1 to %d", f, MaxFeatures)
	}
	return f, nil
}

// canonical names p after its settings: the preset's name, plus
// ":features=N" when the width differs from the preset's own.
func canonical(p Preset) Preset {
	base, _ := Lookup(p.Name)
	if p.Config.Features != base.Config.Features {
		p.Name = fmt.Sprintf("%s:features=%d", base.Name, p.Config.Features)
		p.Description = fmt.Sprintf("%s (%d features instead of %d)", base.Description, p.Config.Features, base.Config.Features)
	}
	p.Config.Name = p.Name
	return p
}
