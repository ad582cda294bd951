package sessions

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Issue 37, point 11: a session whose log compresses very well is refused
// as a bomb by the ratio limit; a total limit given with the ratio off
// (what `sessions import --max-size` sets) lets it in.
func TestImportMaxSizeOverridesTheRatio(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(SessionMeta{Name: "chatty"})
	if err != nil {
		t.Fatal(err)
	}
	log := bytes.Repeat([]byte("epoch 1 batch 2 loss 0.5\n"), 40000) // 1 MB
	if err := os.WriteFile(filepath.Join(s.RunsDir(), "ext.log"), log, 0o600); err != nil {
		t.Fatal(err)
	}
	var arc bytes.Buffer
	if _, err := s.Export(&arc, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	other, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	strict := ImportOptions{MaxExpansion: 10, MinTotalBytes: 64 << 10, ArchiveSize: int64(arc.Len())}
	if _, _, err := other.Import(bytes.NewReader(arc.Bytes()), strict); !errors.Is(err, ErrArchiveTooLarge) {
		t.Fatalf("ratio limit: %v, want ErrArchiveTooLarge", err)
	}
	trusted := ImportOptions{MaxExpansion: -1, MaxTotalBytes: 8 << 20, MaxFileBytes: 8 << 20, ArchiveSize: int64(arc.Len())}
	got, _, err := other.Import(bytes.NewReader(arc.Bytes()), trusted)
	if err != nil {
		t.Fatalf("with a total limit: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(got.RunsDir(), "ext.log")); !bytes.Equal(b, log) {
		t.Error("the log did not come whole")
	}
	small := ImportOptions{Replace: true, MaxExpansion: -1, MaxTotalBytes: 512 << 10, MinTotalBytes: 1, ArchiveSize: int64(arc.Len())}
	if _, _, err := other.Import(bytes.NewReader(arc.Bytes()), small); !errors.Is(err, ErrArchiveTooLarge) {
		t.Errorf("over the given total: %v", err)
	}
}
