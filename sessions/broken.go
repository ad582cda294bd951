package sessions

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gnnscope/gnnscope/profile"
)

// StatusBroken is the status of a folder of the store that is no whole
// session: no session.json (a launch or a removal interrupted), a folder
// whose name is not an id the store makes, or the temporary folder of an
// interrupted launch or removal. The list shows it with its reason, and
// Store.Delete removes it.
const StatusBroken = profile.StatusBroken

// Hidden folders of the store's sessions folder: a session being created
// (its files are written there, then the folder is renamed to its id, so
// a session appears only once its session.json exists) and a session
// being deleted (renamed out of the list first, then removed).
const (
	newPrefix = ".new-"
	rmPrefix  = ".rm-"
	// staleNewAge is the age past which a creation's folder is taken
	// for the leftover of an interrupted launch.
	staleNewAge = 10 * time.Minute
)

// renameIfAbsent renames from to to unless to exists (a check, then the
// rename: where the system cannot do both at once).
func renameIfAbsent(from, to string) error {
	if _, err := os.Lstat(to); err == nil {
		return fmt.Errorf("rename %s: %w", to, os.ErrExist)
	}
	return os.Rename(from, to)
}

// hiddenName returns prefix, id, '-' and random digits.
func hiddenName(prefix, id string) string {
	var r [4]byte
	_, _ = rand.Read(r[:])
	return prefix + id + "-" + hex.EncodeToString(r[:])
}

// CheckID checks that id has the form of the ids the store makes (see
// NewID): yyyymmdd-hhmmss-XXXX, X a lowercase letter or a digit. Imports
// rename sessions of other ids; "last" and "latest" are never ids.
func CheckID(id string) error {
	const form = "20060102-150405-xxxx"
	ok := len(id) == len(form)
	for i := 0; ok && i < len(id); i++ {
		c := id[i]
		switch {
		case form[i] == '-':
			ok = c == '-'
		case form[i] == 'x':
			ok = c >= '0' && c <= '9' || c >= 'a' && c <= 'z'
		default:
			ok = c >= '0' && c <= '9'
		}
	}
	if !ok {
		return &NameError{Kind: "session id", Name: id, Reason: "not of the form the store makes (yyyymmdd-hhmmss-xxxx)"}
	}
	return nil
}

// brokenReason says why the folder name of the sessions folder is no
// whole session ("" if it is one, or is not the store's business: an
// import under way, a creation under way).
func brokenReason(dir, name string) string {
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return ""
	}
	switch {
	case strings.HasPrefix(name, rmPrefix):
		return "the leftover of an interrupted removal"
	case strings.HasPrefix(name, newPrefix):
		if fi, err := os.Lstat(dir); err == nil && time.Since(fi.ModTime()) > staleNewAge {
			return "the temporary folder of an interrupted launch"
		}
		return ""
	case ValidName(name) != nil:
		return ""
	}
	if _, err := os.Lstat(filepath.Join(dir, metaFile)); errors.Is(err, os.ErrNotExist) {
		if CheckID(name) != nil {
			return "not a session: no session.json, and not an id the store makes"
		}
		return "no session.json (a launch or a removal was interrupted)"
	}
	return ""
}

// leftoverName reports whether name is one Delete may remove as a
// leftover without a session in it (see brokenReason).
func leftoverName(name string) bool {
	if strings.ContainsAny(name, `/\`) || name == "" {
		return false
	}
	return strings.HasPrefix(name, rmPrefix) && len(name) > len(rmPrefix) ||
		strings.HasPrefix(name, newPrefix) && len(name) > len(newPrefix)
}

// Broken returns the reason the folder name of the store is broken (see
// StatusBroken), "" when it is a session or not there.
func (st *Store) Broken(name string) string {
	if strings.ContainsAny(name, `/\`) || name == "" || name == "." || name == ".." {
		return ""
	}
	return brokenReason(filepath.Join(st.root, "sessions", name), name)
}

// removeAside renames the folder dir of the sessions folder out of the
// list (a hidden .rm- folder), then removes it: a removal that is killed
// leaves a leftover listed as broken, never a session without its
// session.json.
func removeAside(dir, id string) error {
	aside := filepath.Join(filepath.Dir(dir), hiddenName(rmPrefix, id))
	if err := os.Rename(dir, aside); err != nil {
		return err
	}
	return os.RemoveAll(aside)
}
