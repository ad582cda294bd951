package sessions

import (
	"errors"
	"fmt"

	"github.com/gnnscope/gnnscope/profile"
)

// ErrNewerSchema is the reason a journal written by a newer event schema
// than this gnnscope reads (profile.SchemaVersion, in run_start's "v") is
// refused, rather than misread.
var ErrNewerSchema = errors.New("journal written by a newer schema")

// SchemaError is the error for a journal whose run_start declares a newer
// schema version; it matches ErrNewerSchema.
type SchemaError struct {
	Path    string // the journal ("" when the caller names it)
	Version int    // the version it declares
}

func (e *SchemaError) Error() string {
	j := "the journal"
	if e.Path != "" {
		j = "journal " + e.Path
	}
	return fmt.Sprintf("%s was written by schema version %d; this gnnscope reads up to %d: upgrade gnnscope",
		j, e.Version, profile.SchemaVersion)
}

// Is makes a SchemaError match ErrNewerSchema.
func (e *SchemaError) Is(target error) bool { return target == ErrNewerSchema }

// checkSchema refuses a run_start of a newer schema version than this
// gnnscope reads; other events pass.
func checkSchema(e *profile.Event, path string) error {
	if e.T == profile.TypeRunStart && e.V > profile.SchemaVersion {
		return &SchemaError{Path: path, Version: e.V}
	}
	return nil
}
