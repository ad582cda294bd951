package sessions

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// variantConfig returns the config session.json records for a variant
// (its spec's "config" object, as runner writes it), nil if none.
func variantConfig(s *Session, run string) json.RawMessage {
	for _, v := range s.Meta.Variants {
		if v.Name != run {
			continue
		}
		var spec struct {
			Config json.RawMessage `json:"config"`
		}
		if json.Unmarshal(v.Spec, &spec) == nil {
			return spec.Config
		}
	}
	return nil
}

// sessionDataset returns the dataset of the session's experiment (its
// spec's "data" or "dataset" string), "" if none.
func sessionDataset(s *Session) string {
	var spec struct {
		Data    string `json:"data"`
		Dataset string `json:"dataset"`
	}
	if len(s.Meta.Spec) == 0 || json.Unmarshal(s.Meta.Spec, &spec) != nil {
		return ""
	}
	if spec.Data != "" {
		return spec.Data
	}
	return spec.Dataset
}

// flattenTyped turns a JSON object into dotted keys (nested objects) with
// text values and with their JSON values (compact; cmd's the command line
// as a string) for typed JSON output, and returns the keys in document
// order. Anything but an object gives none.
func flattenTyped(raw json.RawMessage) (map[string]string, map[string]json.RawMessage, []string) {
	flat, typed := map[string]string{}, map[string]json.RawMessage{}
	var keys []string
	if flattenInto(raw, "", 0, flat, typed, &keys) != nil {
		return map[string]string{}, map[string]json.RawMessage{}, nil
	}
	return flat, typed, keys
}

// typedValue returns v as encoding/json writes it (compact), for typed
// output; invalid JSON becomes a string.
func typedValue(v json.RawMessage) json.RawMessage {
	b, err := json.Marshal(v) // compact, escaped as encoding/json writes it
	if err != nil {
		b, _ = json.Marshal(string(v))
	}
	return b
}

func flattenInto(raw json.RawMessage, prefix string, depth int, flat map[string]string, typed map[string]json.RawMessage, keys *[]string) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errors.New("not an object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if prefix != "" {
			key = prefix + "." + key
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		if key == "cmd" && depth == 0 {
			if argv, ok := stringList(v); ok {
				if _, dup := flat[key]; !dup {
					*keys = append(*keys, key)
				}
				flat[key] = CommandLine(argv)
				typed[key], _ = json.Marshal(flat[key])
				continue
			}
		}
		if len(v) > 0 && v[0] == '{' && depth < 8 {
			if err := flattenInto(v, key, depth+1, flat, typed, keys); err != nil {
				return err
			}
			continue
		}
		if _, dup := flat[key]; !dup {
			*keys = append(*keys, key)
		}
		flat[key] = configText(v)
		typed[key] = typedValue(v)
	}
	return nil
}

// configText renders one JSON value: strings unquoted, numbers canonical
// (so 0.01 and 1e-2 compare equal), null empty, anything else compact.
func configText(v json.RawMessage) string {
	if len(v) == 0 {
		return ""
	}
	switch v[0] {
	case '"':
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
	case 'n':
		return ""
	case '[':
		var b bytes.Buffer
		if json.Compact(&b, v) == nil {
			return b.String()
		}
	case 't', 'f':
		return string(v)
	default:
		if x, err := strconv.ParseFloat(string(v), 64); err == nil {
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
	}
	return string(v)
}

// configDifferences returns the keys whose values are not the same in
// every run (a key some runs lack differs), in order of first appearance.
// Runs without any config (not started, foreign) are left out of the
// comparison. An external run (its config has a "cmd") is compared by
// its command alone, and the other runs by everything else: an external
// run's command always differs from a built-in run's, and a built-in
// run's settings do not differ from an external run's lack of them.
func configDifferences(runs []RunFigures, order [][]string) []string {
	var all []string
	seen := map[string]bool{}
	for _, keys := range order {
		for _, k := range keys {
			if !seen[k] {
				seen[k] = true
				all = append(all, k)
			}
		}
	}
	var with, builtin []*RunFigures
	for i := range runs {
		if len(runs[i].Config) > 0 {
			with = append(with, &runs[i])
			if _, ext := runs[i].Config["cmd"]; !ext {
				builtin = append(builtin, &runs[i])
			}
		}
	}
	diff := []string{}
	for _, k := range all {
		group := builtin
		if k == "cmd" {
			group = with
		}
		if differs(group, k) {
			diff = append(diff, k)
		}
	}
	return diff
}

// differs reports whether key k has not the same value in every run of
// group (of two runs or more).
func differs(group []*RunFigures, k string) bool {
	if len(group) < 2 {
		return false
	}
	v0, ok0 := group[0].Config[k]
	for _, r := range group[1:] {
		if v, ok := r.Config[k]; ok != ok0 || v != v0 {
			return true
		}
	}
	return false
}

// externalConfig is what run_start's config says of an external run: the
// command and that it is one.
type externalConfig struct {
	Cmd      json.RawMessage `json:"cmd"`
	External bool            `json:"external"`
}

// IsExternalConfig reports whether a run_start config is an external
// run's: an object with "external": true or a "cmd".
func IsExternalConfig(raw json.RawMessage) bool {
	var c externalConfig
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &c) != nil {
		return false
	}
	return c.External || len(c.Cmd) > 0
}

// ExternalCommand returns the command line of an external run from its
// run_start config ("cmd": a list of arguments or one string); ok is
// false for any other config.
func ExternalCommand(raw json.RawMessage) (string, bool) {
	var c externalConfig
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &c) != nil || len(c.Cmd) == 0 {
		return "", false
	}
	if argv, ok := stringList(c.Cmd); ok {
		return CommandLine(argv), true
	}
	var line string
	if json.Unmarshal(c.Cmd, &line) == nil {
		return line, true
	}
	return "", false
}

// stringList decodes a JSON list of strings.
func stringList(raw json.RawMessage) ([]string, bool) {
	if len(raw) == 0 || raw[0] != '[' {
		return nil, false
	}
	var l []string
	if json.Unmarshal(raw, &l) != nil {
		return nil, false
	}
	return l, true
}

// CommandLine joins a command's arguments as a shell would read them back:
// arguments with spaces, quotes or shell characters are single-quoted.
func CommandLine(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = shellQuote(a)
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_./=:,+@%", c) >= 0) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}

// ShortCommand shortens a command line for a narrow column: it starts at
// the first Python script, else after a leading interpreter or launcher
// (python, python3.11, torchrun, uv run ...) and its options, and the
// script's folders are dropped, so "python3 /src/train.py --lr 0.01"
// reads "train.py --lr 0.01".
func ShortCommand(line string) string {
	f := strings.Fields(line)
	if i := slices.IndexFunc(f, func(a string) bool { return strings.HasSuffix(a, ".py") }); i >= 0 {
		f = f[i:]
	}
	for len(f) > 1 {
		base := f[0][strings.LastIndexByte(f[0], '/')+1:]
		if !strings.HasPrefix(base, "python") && base != "torchrun" && base != "env" && base != "uv" && base != "run" && !strings.HasPrefix(f[0], "-") {
			break
		}
		f = f[1:]
	}
	if len(f) > 0 {
		f[0] = f[0][strings.LastIndexByte(f[0], '/')+1:]
	}
	return strings.Join(f, " ")
}
