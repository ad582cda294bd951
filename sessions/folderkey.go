package sessions

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// FolderKey returns a digest of what the folder of session id holds:
// its path, and the name, size and modification time of every entry of
// the folder and of its runs/ folder. It costs one directory read and one lstat per
// entry and reads no file, yet any write to a session's files (a journal
// that grows, a pid file rewritten, a run added, session.json changed)
// changes it: a list entry cached under it holds while it does. Like
// Get, it warns about an exposed folder (see SetWarn).
func (st *Store) FolderKey(id string) (string, error) {
	if err := ValidName(id); err != nil {
		return "", fmt.Errorf("folder key: %w", err)
	}
	dir := filepath.Join(st.root, "sessions", id)
	if st.warn != nil {
		st.checkExposure(id, dir)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", dir) // a store copied elsewhere has other paths
	if err := hashFolder(h, dir, ""); err != nil {
		return "", err
	}
	if err := hashFolder(h, filepath.Join(dir, "runs"), "runs/"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashFolder writes each entry of dir to h: its name (after prefix),
// mode, size and modification time.
func hashFolder(h io.Writer, dir, prefix string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("folder key: %w", err)
	}
	for _, ent := range ents {
		fi, err := ent.Info()
		if err != nil {
			// removed meanwhile: the key says so
			fmt.Fprintf(h, "%s%s\t-\n", prefix, ent.Name())
			continue
		}
		fmt.Fprintf(h, "%s%s\t%v\t%d\t%d\n", prefix, ent.Name(), fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
	}
	return nil
}
