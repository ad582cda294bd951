//go:build unix

package cmdutil

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/sessions"
)

// Issue 37, point 2: `export trace ... -o /dev/null --force` replaced the
// device with a regular file. Every -o refuses anything but a regular file
// or nothing, --force included.
func TestWriteOutputRefusesDevices(t *testing.T) {
	put := func(w io.Writer) error { _, err := io.WriteString(w, "trace"); return err }
	link := filepath.Join(t.TempDir(), "null")
	if err := os.Symlink(os.DevNull, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{os.DevNull, link} {
		if err := WriteOutput(io.Discard, p, true, put); !errors.Is(err, sessions.ErrNotRegular) {
			t.Errorf("-o %s --force: %v", p, err)
		}
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode()&os.ModeDevice == 0 {
		t.Fatalf("%s is no longer a device: %v", os.DevNull, err)
	}
	// a regular file: refused without --force, replaced with it
	p := filepath.Join(t.TempDir(), "out.json")
	if err := WriteOutput(io.Discard, p, false, put); err != nil {
		t.Fatal(err)
	}
	if err := WriteOutput(io.Discard, p, false, put); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("existing file without --force: %v", err)
	}
	if err := WriteOutput(io.Discard, p, true, put); err != nil {
		t.Errorf("existing file with --force: %v", err)
	}
}
