package sessions

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadPidFile feeds pid file contents to the parser: it never panics,
// every error names the file, and a pid it accepts is one a signal can
// name (1 to 2^31-1) and survives a rewrite (encode) unchanged.
func FuzzReadPidFile(f *testing.F) {
	padded, _ := PidFile{Pid: 4242, Start: 99, Host: "h", Exit: "ok", JournalError: "no space"}.encode()
	for _, seed := range []string{
		"1234\n", " 77 ", `{"pid":42}`, `{"pid":42,"start":123,"host":"h"}`, string(padded),
		`{"pid":-1}`, `{"pid":0}`, `{"pid":1e20}`, `{"pid":4294967297}`, "99999999999999999999",
		"", " ", "\x00", `{"pid":"7"}`, `{"pid":7,"exit":5}`, `[1]`, `{"pid":7}{"pid":8}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		pf, err := parsePidFile("runs/x.pid", b)
		if err != nil {
			if !strings.Contains(err.Error(), "runs/x.pid") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if pf.Pid <= 0 || pf.Pid > maxPid {
			t.Fatalf("accepted pid %d", pf.Pid)
		}
		enc, err := pf.encode()
		if err != nil {
			t.Fatal(err)
		}
		back, err := parsePidFile("runs/x.pid", enc)
		if err != nil || back.Pid != pf.Pid || back.Start != pf.Start || back.Exit != pf.Exit {
			t.Fatalf("rewrite of %+v: %+v, %v", pf, back, err)
		}
		if len(enc) < PidFileSize {
			t.Fatalf("encoded to %d bytes", len(enc))
		}
	})
}

// TestReadPidFileBounds: a pid file over MaxPidFileSize is refused
// without being read whole, naming it.
func TestReadPidFileBounds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.pid")
	if err := os.WriteFile(path, []byte("42"+strings.Repeat(" ", MaxPidFileSize)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPidFile(path); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), path) {
		t.Errorf("large pid file: %v", err)
	}
	if err := os.WriteFile(path, []byte("42"+strings.Repeat(" ", PidFileSize)), 0o600); err != nil {
		t.Fatal(err)
	}
	if pf, err := ReadPidFile(path); err != nil || pf.Pid != 42 {
		t.Errorf("padded pid file: %+v, %v", pf, err)
	}
}
