package runner

import (
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// externalFields is External without its JSON methods.
type externalFields External

// externalJSON is External as stored: a JSON string cannot hold bytes
// that are not UTF-8 (encoding/json writes U+FFFD for them), so a command
// line, word or folder that has such bytes is also stored as bytes
// (base64), which decoding prefers.
type externalJSON struct {
	externalFields
	CmdBytes  []byte   `json:"cmd_bytes,omitempty"`
	ArgvBytes [][]byte `json:"argv_bytes,omitempty"`
	CwdBytes  []byte   `json:"cwd_bytes,omitempty"`
}

// MarshalJSON encodes e, its non-UTF-8 strings kept as bytes.
func (e External) MarshalJSON() ([]byte, error) {
	out := externalJSON{externalFields: externalFields(e)}
	if !utf8.ValidString(e.Cmd) {
		out.CmdBytes = []byte(e.Cmd)
	}
	if !utf8.ValidString(e.Cwd) {
		out.CwdBytes = []byte(e.Cwd)
	}
	if slices.ContainsFunc(e.Argv, func(a string) bool { return !utf8.ValidString(a) }) {
		for _, a := range e.Argv {
			out.ArgvBytes = append(out.ArgvBytes, []byte(a))
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON decodes what MarshalJSON wrote (and Externals written
// before it, as strings alone).
func (e *External) UnmarshalJSON(b []byte) error {
	var in externalJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*e = External(in.externalFields)
	if in.CmdBytes != nil {
		e.Cmd = string(in.CmdBytes)
	}
	if in.CwdBytes != nil {
		e.Cwd = string(in.CwdBytes)
	}
	if in.ArgvBytes != nil {
		e.Argv = e.Argv[:0]
		for _, a := range in.ArgvBytes {
			e.Argv = append(e.Argv, string(a))
		}
	}
	return nil
}
