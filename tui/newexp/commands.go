package newexp

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/gnnscope/gnnscope/runner"
)

// cmdPrefix starts the keys of the command fields ("cmd.0", "cmd.1"...):
// each holds one external run as `gnnscope run --cmd` takes it,
// NAME=COMMAND.
const cmdPrefix = "cmd."

// FieldCommand is the key of the command field a blank form has (more
// appear as they are filled: CommandKey).
const FieldCommand = cmdPrefix + "0"

// CommandKey returns the key of the i-th command field.
func CommandKey(i int) string { return fmt.Sprintf("%s%d", cmdPrefix, i) }

// isCommand reports whether f is a command field.
func isCommand(f *field) bool { return strings.HasPrefix(f.key, cmdPrefix) }

// commandFields returns the command fields, in order.
func (m *Model) commandFields() []*field {
	var out []*field
	for _, f := range m.fields {
		if isCommand(f) {
			out = append(out, f)
		}
	}
	return out
}

// addCommand appends a command field holding value before the Launch
// button; base, when not nil, is the external run it was copied from,
// whose environment, folder and instrumentation the edited command keeps.
func (m *Model) addCommand(value string, base *runner.External) {
	f := &field{key: CommandKey(m.cmds), label: "Command", kind: text, input: m.c.NewInput("NAME=COMMAND"), ext: base}
	m.cmds++
	f.input.SetValue(value)
	f.input.CursorEnd()
	if m.width > 0 {
		f.input.SetWidth(cmdW(m.width))
	}
	at := len(m.fields) - 1 // the Launch button stays last
	m.fields = slices.Insert(m.fields, at, f)
	if m.focus >= at {
		m.focus++
	}
}

// keepEmptyCommand adds an empty command field once the last one is
// filled: there is always one to add a run with.
func (m *Model) keepEmptyCommand() {
	cmds := m.commandFields()
	if len(cmds) == 0 || strings.TrimSpace(cmds[len(cmds)-1].input.Value()) != "" {
		m.addCommand("", nil)
	}
}

// cmdW is the width of a command's input: the row, less the label.
func cmdW(w int) int { return max(inputW(w), w-2-labelW-4) }

// commands returns the external runs of the command fields (empty ones
// are none: clearing a field drops its run); errors go to their fields.
// taken are the names of the engine's variants.
func (m *Model) commands(taken []string, errs map[string]string) []runner.Variant {
	var out []runner.Variant
	for _, f := range m.commandFields() {
		value := strings.TrimSpace(f.input.Value())
		if value == "" {
			continue
		}
		v, err := runner.ParseCmd(value)
		if err != nil {
			errs[f.key] = strings.TrimPrefix(err.Error(), "--cmd "+value+": ")
			continue
		}
		if slices.Contains(taken, v.Name) {
			errs[f.key] = fmt.Sprintf("another run is named %s: write NAME=COMMAND", v.Name)
			continue
		}
		taken = append(taken, v.Name)
		if f.ext != nil {
			v.External.Env, v.External.Cwd = f.ext.Env, f.ext.Cwd
			v.External.NoAuto, v.External.TorchProfile = f.ext.NoAuto, f.ext.TorchProfile
		}
		out = append(out, v)
	}
	return out
}

// commandsOnly reduces errs to those of the fields an experiment of
// commands alone uses: its name, repeats and commands (and the launch).
func commandsOnly(errs map[string]string) {
	for k := range errs {
		if k != FieldName && k != FieldRepeats && k != FieldLaunch && !strings.HasPrefix(k, cmdPrefix) {
			delete(errs, k)
		}
	}
}

// prefillCommand puts an external run of a copied session in a command
// field.
func (m *Model) prefillCommand(v runner.Variant) {
	cmds := m.commandFields()
	last := cmds[len(cmds)-1] // the empty one
	last.input.SetValue(v.Name + "=" + v.External.Cmd)
	last.input.CursorEnd()
	last.ext = v.External
	m.keepEmptyCommand()
}

// writeExternal writes an external run's [variants.NAME] table, and its
// environment as [variants.NAME.env].
func writeExternal(b *bytes.Buffer, v runner.Variant) error {
	e := v.External
	table := map[string]any{"cmd": e.Cmd}
	if e.Cwd != "" {
		table["cwd"] = e.Cwd
	}
	if e.NoAuto {
		table["auto"] = false
	}
	if e.TorchProfile > 0 {
		table["torch_profile"] = e.TorchProfile
	}
	out, err := toml.Marshal(table)
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "\n[variants.%s]\n", v.Name)
	b.Write(out)
	if len(e.Env) == 0 {
		return nil
	}
	env, err := toml.Marshal(e.Env)
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "\n[variants.%s.env]\n", v.Name)
	b.Write(env)
	return nil
}

// toggled reports whether an engine variant (or the ablation) is on.
func (m *Model) toggled() bool {
	return slices.ContainsFunc(m.fields, func(f *field) bool { return f.kind == toggle && f.on })
}

// filledCommands reports whether a command field holds text.
func (m *Model) filledCommands() bool {
	return slices.ContainsFunc(m.commandFields(), func(f *field) bool { return strings.TrimSpace(f.input.Value()) != "" })
}

// variantNames returns the names of variants.
func variantNames(variants []runner.Variant) []string {
	names := make([]string, len(variants))
	for i, v := range variants {
		names[i] = v.Name
	}
	return names
}
