package sessions

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"time"
)

// withDefaults fills the limits left at zero (see ImportOptions).
func (opts ImportOptions) withDefaults() ImportOptions {
	if opts.MaxFiles <= 0 {
		opts.MaxFiles = DefaultMaxFiles
	}
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	if opts.MaxTotalBytes <= 0 {
		opts.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if opts.MinTotalBytes <= 0 {
		opts.MinTotalBytes = DefaultMinTotalBytes
	}
	if opts.MaxExpansion == 0 {
		opts.MaxExpansion = DefaultMaxExpansion
	}
	if opts.create == nil {
		opts.create = func(p string) (io.WriteCloser, error) {
			return os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		}
	}
	return opts
}

// importID returns the id an archive's session gets in the store: its
// own, or a new one (NewID, at its export time) when its own is not of the
// form the store makes (CheckID), which rep.RenamedFrom then records. It
// fills rep's ID, Name and Manifest.
func importID(man Manifest, rep *ImportReport) string {
	id := man.ID
	rep.ID, rep.Name, rep.Manifest = id, man.Name, man
	if CheckID(id) == nil {
		return id
	}
	at := man.Exported
	if at.IsZero() {
		at = time.Now()
	}
	id = NewID(at)
	rep.ID, rep.RenamedFrom = id, man.ID
	return id
}

// renameMeta sets the id of the extracted session.json in dir to id
// when it says another (a session renamed on import).
func renameMeta(dir, id string) error {
	s := &Session{dir: dir}
	b, err := ReadRegular(filepath.Join(dir, metaFile), MaxMetaSize)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &s.Meta); err != nil {
		return err
	}
	if s.Meta.ID == id {
		return nil
	}
	s.Meta.ID = id
	return s.Save()
}
