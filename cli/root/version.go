package root

import (
	"runtime/debug"
	"strings"
)

// Version describes the running binary from its build information: the
// module version ("(devel)" for a build from a checkout), the VCS
// revision and commit time with "modified" when the tree had changes,
// and the Go version.
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (no build information)"
	}
	return versionOf(info)
}

// versionOf is Version for the given build information.
func versionOf(info *debug.BuildInfo) string {
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, at string
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	parts := []string{v}
	if rev != "" {
		parts = append(parts, "revision "+rev[:min(len(rev), 12)])
		var notes []string
		if at != "" {
			notes = append(notes, at)
		}
		if modified {
			notes = append(notes, "modified")
		}
		if len(notes) > 0 {
			parts = append(parts, "("+strings.Join(notes, ", ")+")")
		}
	}
	if info.GoVersion != "" {
		parts = append(parts, info.GoVersion)
	}
	return strings.Join(parts, " ")
}
