package sessions

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// zerosArchive is an archive whose journal is n zero bytes: gzip shrinks
// it about a thousand times.
func zerosArchive(t *testing.T, n int) []byte {
	t.Helper()
	const id = "20261122-120000-abcd"
	return craft(t, id, []entry{file(id+"/session.json", `{"v":1,"id":"`+id+`"}`),
		file(id+"/runs/r.jsonl", string(make([]byte, n)))}, nil)
}

// countingFile counts what is written to a file of an import.
type countingFile struct {
	*os.File
	n *int64
}

func (c countingFile) Write(p []byte) (int, error) {
	n, err := c.File.Write(p)
	*c.n += int64(n)
	return n, err
}

// TestImportRatioLimit: an archive that expands over the limit for its
// size is refused, while it is written (nothing past the limit reaches
// the disk), with an error naming the archive, the limit and the ratio,
// and the store is left as it was; from a pipe, the ratio applies to what
// was read so far.
func TestImportRatioLimit(t *testing.T) {
	arc := zerosArchive(t, 4<<20)
	p := filepath.Join(t.TempDir(), "zeros.tar.gz")
	if err := os.WriteFile(p, arc, 0o600); err != nil {
		t.Fatal(err)
	}
	st := newStore(t)
	before := snapshot(t, st.Root())
	var written int64
	opts := ImportOptions{MinTotalBytes: 64 << 10, create: func(p string) (io.WriteCloser, error) {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		return countingFile{f, &written}, err
	}}
	limit := min(DefaultMaxTotalBytes, max(int64(64<<10), DefaultMaxExpansion*int64(len(arc))))

	_, _, err := st.ImportFile(p, opts)
	if !errors.Is(err, ErrArchiveTooLarge) || !errors.Is(err, ErrBadArchive) {
		t.Fatalf("error %v", err)
	}
	for _, want := range []string{"import " + p + ":", "100 times its compressed size", "at most 32.0 GiB"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if written != 0 {
		t.Errorf("%d bytes written: the archive's size was known, the manifest says it is too large", written)
	}

	// from a pipe: refused as it is written, at the limit
	_, _, err = st.Import(io.MultiReader(bytes.NewReader(arc)), opts)
	if !errors.Is(err, ErrArchiveTooLarge) || !strings.Contains(err.Error(), "read of it so far") {
		t.Fatalf("error %v", err)
	}
	if written == 0 || written > limit {
		t.Errorf("%d bytes written, limit %d", written, limit)
	}
	if after := snapshot(t, st.Root()); !reflect.DeepEqual(before, after) {
		t.Errorf("the refused import left %v", after)
	}

	// under the default floor of 64 MiB, it imports
	if _, _, err := st.ImportFile(p, ImportOptions{}); err != nil {
		t.Errorf("default limits: %v", err)
	}
}

// TestImportLimitFormula checks the limit for archive sizes around the
// floor and the cap.
func TestImportLimitFormula(t *testing.T) {
	for _, tc := range []struct{ size, want int64 }{
		{1, DefaultMinTotalBytes},
		{512 << 10, DefaultMinTotalBytes},
		{2 << 20, 200 << 20},
		{100 << 20, 10000 << 20},
		{1 << 30, DefaultMaxTotalBytes},
		{1 << 62, DefaultMaxTotalBytes},
	} {
		l := importLimit{ratio: DefaultMaxExpansion, floor: DefaultMinTotalBytes, cap: DefaultMaxTotalBytes, size: tc.size}
		if got := l.limit(); got != tc.want {
			t.Errorf("archive of %d bytes: limit %d, want %d", tc.size, got, tc.want)
		}
	}
}

// failingFile fails as a full disk does after its first n bytes.
type failingFile struct{ n int }

func (f *failingFile) Write(p []byte) (int, error) {
	if len(p) > f.n {
		w := f.n
		f.n = 0
		return w, syscall.ENOSPC
	}
	f.n -= len(p)
	return len(p), nil
}

func (f *failingFile) Close() error { return nil }

// TestImportBlamesTheStore: a failure to write the extracted files is
// the store's, not the archive's.
func TestImportBlamesTheStore(t *testing.T) {
	src := newStore(t)
	p := filepath.Join(t.TempDir(), "s.tar.gz")
	if _, err := archiveSession(t, src).ExportFile(p, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	st := newStore(t)
	before := snapshot(t, st.Root())
	for _, n := range []int{0, 10} {
		_, _, err := st.ImportFile(p, ImportOptions{create: func(string) (io.WriteCloser, error) { return &failingFile{n: n}, nil }})
		var se *StoreError
		if !errors.As(err, &se) || !errors.Is(err, syscall.ENOSPC) || errors.Is(err, ErrBadArchive) {
			t.Fatalf("error %v", err)
		}
		want := "import " + p + ": writing to store " + st.Root() + ": "
		if !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), ": no space left on device") {
			t.Errorf("error %q, want %q...: no space left on device", err, want)
		}
		if after := snapshot(t, st.Root()); !reflect.DeepEqual(before, after) {
			t.Errorf("the failed import left %v", after)
		}
	}
	// a file that cannot be created
	_, _, err := st.ImportFile(p, ImportOptions{create: func(p string) (io.WriteCloser, error) {
		return nil, &os.PathError{Op: "open", Path: p, Err: syscall.EDQUOT}
	}})
	if !errors.Is(err, syscall.EDQUOT) || errors.Is(err, ErrBadArchive) || !strings.Contains(err.Error(), "writing to store") {
		t.Errorf("error %v", err)
	}
}
