package sessions

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// listCacheVersion changes whenever Entry or how it is computed changes:
// entries cached by another version are computed again.
const listCacheVersion = 4

// cachedEntry is a session's list entry as cached in the store's
// listcache/<id>.json, with the key of what it was computed from.
type cachedEntry struct {
	Version int    `json:"version"`
	Key     string `json:"key"`
	// Files is the session folder's key when the entry was computed
	// (Store.FolderKey): while it holds, the entry is read back without
	// reading the runs' states.
	Files string `json:"files"`
	Entry Entry  `json:"entry"`
}

// entryKey is the key a session's list entry is cached under: a digest
// of its metadata and of every run's status, error and journal size and
// modification time, as the store lists them (the end of each journal
// only). It reports false for a session that may still change without
// its journals changing (a run running, pending or of unknown state) or
// that could not be read: its entry is computed every time.
func entryKey(info sessions.SessionInfo) (string, bool) {
	if info.Err != "" || len(info.Runs) == 0 {
		return "", false
	}
	h := sha256.New()
	meta, err := json.Marshal(info.SessionMeta)
	if err != nil {
		return "", false
	}
	fmt.Fprintf(h, "%d\n%s\n%s\n", listCacheVersion, info.Dir, meta)
	for _, r := range info.Runs {
		switch r.Status {
		case profile.StatusRunning, profile.StatusPending, profile.StatusUnknown:
			return "", false
		}
		fmt.Fprintf(h, "%s\t%s\t%d\t%d\t%d\t%q\n", r.Run, r.Status, r.Size, r.Modified.UnixNano(), r.Dropped, r.Error)
	}
	return hex.EncodeToString(h.Sum(nil)), true
}

// describeCached is describeSession through the cache, for the session
// folder f of Store.Folders. The cache is checked first against the
// folder's key (Store.FolderKey: one directory read and one lstat per
// file, no file read), so a warm list reads no journal: listing costs
// what the list shows. An entry whose files changed is computed again
// from the run states and cached anew once its session has settled. The
// folder key is taken before the states are read, so a write meanwhile
// only makes the next list compute the entry again. A cache that cannot
// be read or written only costs the computation.
func describeCached(store *sessions.Store, f sessions.SessionInfo) Entry {
	if f.Broken != "" {
		return describeSession(store, f)
	}
	files, ferr := store.FolderKey(f.ID)
	path := filepath.Join(store.Root(), "listcache", f.ID+".json")
	var c cachedEntry
	if b, err := sessions.ReadRegular(path, sessions.MaxMetaSize); err == nil {
		if json.Unmarshal(b, &c) != nil || c.Version != listCacheVersion {
			c = cachedEntry{}
		}
	}
	if ferr == nil && c.Files != "" && c.Files == files {
		return c.Entry
	}
	info := store.Info(f.ID)
	key, ok := entryKey(info)
	if !ok {
		return describeSession(store, info)
	}
	if c.Key == key {
		if ferr == nil {
			c.Files = files
			writeCached(path, c)
		}
		return c.Entry
	}
	e := slim(describeSession(store, info))
	if e.Error == "" {
		if ferr != nil {
			files = ""
		}
		writeCached(path, cachedEntry{Version: listCacheVersion, Key: key, Files: files, Entry: e})
	}
	return e
}

// slim keeps of e's runs what the list's table shows: those that
// skipped batches, with their skipped batches only. A cached entry costs
// what its line does, not a record per run. `sessions ls --json`, which
// prints every run's figures, is not cached.
func slim(e Entry) Entry {
	runs := []sessions.RunFigures{}
	for _, r := range e.Runs {
		if sessions.SkipText(r.SkippedBatches, r.TotalBatches) != "" {
			runs = append(runs, sessions.RunFigures{Run: r.Run, SkippedBatches: r.SkippedBatches, TotalBatches: r.TotalBatches})
		}
	}
	e.Runs = runs
	return e
}

// writeCached writes c to path through a private temporary file renamed
// into place, so that a reader never sees half of it; errors are dropped.
func writeCached(path string, c cachedEntry) {
	b, err := json.Marshal(c)
	if err != nil {
		return
	}
	dir := filepath.Dir(path)
	if os.MkdirAll(dir, 0o700) != nil {
		return
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
}
