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
const listCacheVersion = 2

// cachedEntry is a session's list entry as cached in the store's
// listcache/<id>.json, with the key of what it was computed from.
type cachedEntry struct {
	Version int    `json:"version"`
	Key     string `json:"key"`
	Entry   Entry  `json:"entry"`
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

// describeCached is describeSession through the cache: an entry whose
// key still holds is read back instead of reading every journal again
// (listing costs what the list shows, not the runs' events); a new one is
// cached when its session has settled. A cache that cannot be read or
// written only costs the computation.
func describeCached(store *sessions.Store, info sessions.SessionInfo) Entry {
	key, ok := entryKey(info)
	if !ok {
		return describeSession(store, info)
	}
	path := filepath.Join(store.Root(), "listcache", info.ID+".json")
	if b, err := sessions.ReadRegular(path, sessions.MaxMetaSize); err == nil {
		var c cachedEntry
		if json.Unmarshal(b, &c) == nil && c.Version == listCacheVersion && c.Key == key {
			return c.Entry
		}
	}
	e := slim(describeSession(store, info))
	if e.Error == "" {
		writeCached(path, cachedEntry{Version: listCacheVersion, Key: key, Entry: e})
	}
	return e
}

// slim keeps of e's runs what the list's table shows (their skipped
// batches): a cached entry costs what its line does. `sessions ls
// --json`, which prints every run's figures, is not cached.
func slim(e Entry) Entry {
	runs := make([]sessions.RunFigures, len(e.Runs))
	for i, r := range e.Runs {
		runs[i] = sessions.RunFigures{Run: r.Run, SkippedBatches: r.SkippedBatches, TotalBatches: r.TotalBatches}
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
