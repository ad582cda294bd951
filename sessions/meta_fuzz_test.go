package sessions

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzSessionMeta feeds arbitrary bytes as a session's session.json to
// its readers: Store.Get (every command) and the check of an import. They
// must never panic; a session they accept has the id of its folder and
// variant names that are safe file names, and what the import accepts,
// Get accepts.
func FuzzSessionMeta(f *testing.F) {
	f.Add([]byte(`{"v":1,"id":"s1","name":"cora","created":"2026-11-22T15:30:45Z","variants":[{"name":"baseline","spec":{"config":{}}}]}`))
	f.Add([]byte(`{"id":"other","variants":[{"name":"../../../../tmp/x"}]}`))
	f.Add([]byte(`{"variants":[{"name":"a\u0000b"},{"name":""}],"spec":[1,2]}`))
	f.Add([]byte(`{"variants":null,"created":"yesterday","v":"1"}`))
	f.Add([]byte("\xef\xbb\xbf{}"))
	f.Add([]byte(`[]`))
	const id = "s1"
	st, err := Open(filepath.Join(f.TempDir(), "store")) // the inputs run one at a time in each process
	if err != nil {
		f.Fatal(err)
	}
	dir := filepath.Join(st.Root(), "sessions", id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, metaFile), data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := st.Get(id)
		imported := checkMeta(dir, id)
		if err != nil {
			if imported == nil {
				t.Fatalf("import accepts what Get refuses: %v", err)
			}
			return
		}
		if s.ID() != id {
			t.Fatalf("session %q in folder %q", s.ID(), id)
		}
		for _, v := range s.Meta.Variants {
			if ValidName(v.Name) != nil {
				t.Fatalf("variant %q accepted", v.Name)
			}
		}
	})
}
