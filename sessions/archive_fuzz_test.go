package sessions

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzImport feeds arbitrary archives to Import. Whatever the input,
// Import must not panic, must write nothing outside the store's sessions
// folder, must leave nothing behind when it refuses, and what it accepts
// is one session folder of private regular files and folders.
//
// Tar headers take 512 bytes, and the fuzzer spends its time minimizing
// inputs that long, so most inputs describe an archive that the fuzzer
// builds (fuzzArchive): entries as NUL-separated name, type and data,
// with a manifest made from them. Mode 0 feeds the bytes as they are, mode
// 4 compresses them as tar bytes.
func FuzzImport(f *testing.F) {
	const id = "20261122-120000-abcd"
	for _, seed := range []struct {
		spec string
		mode uint8
	}{
		{id + "/session.json\x000\x00{\"v\":1}", 1},
		{id + "/session.json\x000\x00{}\x00" + id + "/runs/r.jsonl\x000\x00{\"t\":\"run_start\"}\n", 1},
		{id + "/session.json\x000\x00{}\x00" + id + "/runs\x005\x00", 2},
		{id + "/session.json\x000\x00{}\x00" + id + "/../evil\x000\x00x", 2},
		{id + "/session.json\x000\x00{}\x00" + id + "/runs/r.jsonl\x002\x00/etc/passwd", 1},
		{`{"format":"gnnscope-session-archive","v":1,"id":"x","files":[{"path":"session.json","size":2}]}` + "\x000\x00\x00x/session.json\x000\x00{}", 3},
		{"not an archive", 0},
		{"", 4},
	} {
		f.Add([]byte(seed.spec), seed.mode)
	}
	// the inputs run one at a time in each process, in a store in memory
	// where there is one (a session's files are synced)
	base := f.TempDir()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if base, err = os.MkdirTemp("/dev/shm", "gnnscope-fuzz-"); err != nil {
			f.Fatal(err)
		}
		f.Cleanup(func() { os.RemoveAll(base) })
	}
	st, err := Open(filepath.Join(base, "store"))
	if err != nil {
		f.Fatal(err)
	}
	sessionsDir := filepath.Join(st.Root(), "sessions")
	f.Fuzz(func(t *testing.T, spec []byte, mode uint8) {
		arc, ok := fuzzArchive(spec, mode%5)
		if !ok {
			return
		}
		s, _, err := st.Import(bytes.NewReader(arc), ImportOptions{MaxFiles: 50})
		// nothing but the store under base
		if ents, _ := os.ReadDir(base); len(ents) != 1 || ents[0].Name() != "store" {
			t.Fatalf("written outside the store: %v", ents)
		}
		if ents, _ := os.ReadDir(st.Root()); len(ents) != 1 {
			t.Fatalf("written outside the sessions folder: %v", ents)
		}
		ents, _ := os.ReadDir(sessionsDir)
		if err != nil {
			if len(ents) != 0 {
				t.Fatalf("refused (%v) but left %v", err, ents)
			}
			return
		}
		if len(ents) != 1 || ents[0].Name() != s.ID() || ValidName(s.ID()) != nil {
			t.Fatalf("imported %q, the store holds %v", s.ID(), ents)
		}
		werr := filepath.WalkDir(s.Dir(), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			if !fi.IsDir() && !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 {
				t.Errorf("%s: mode %v", p, fi.Mode())
			}
			return nil
		})
		if werr != nil {
			t.Fatal(werr)
		}
		if err := os.RemoveAll(s.Dir()); err != nil {
			t.Fatal(err)
		}
	})
}

// fuzzArchive builds the archive FuzzImport imports. Mode 0: spec is the
// archive. Mode 4: spec is the tar inside it. Modes 1 to 3: spec is a list
// of entries, each three NUL-separated fields: path, type flag (its first
// byte; '0' if empty) and data (a link's target for links). The manifest
// lists the regular files of the session named by the first path's first
// component (mode 1), all but the last of them (mode 2), or is the first
// entry's data (mode 3). ok is false if tar cannot write the entries.
func fuzzArchive(spec []byte, mode uint8) (arc []byte, ok bool) {
	if mode == 0 {
		return spec, true
	}
	var tarBytes bytes.Buffer
	if mode == 4 {
		tarBytes.Write(spec)
	} else {
		fields := bytes.Split(spec, []byte{0})
		var hdrs []tar.Header
		var data [][]byte
		var man Manifest
		man.Format, man.Version = ArchiveFormat, ArchiveVersion
		for i := 0; i < len(fields); i += 3 {
			name := string(fields[i])
			typ, body := byte(tar.TypeReg), []byte(nil)
			if i+1 < len(fields) && len(fields[i+1]) > 0 {
				typ = fields[i+1][0]
			}
			if i+2 < len(fields) {
				body = fields[i+2]
			}
			h := tar.Header{Typeflag: typ, Name: name, Mode: 0o600}
			switch typ {
			case tar.TypeReg:
				h.Size = int64(len(body))
			case tar.TypeSymlink, tar.TypeLink:
				h.Linkname, body = string(body), nil
			default:
				body = nil
			}
			if man.ID == "" {
				man.ID, _, _ = strings.Cut(name, "/")
			}
			if typ == tar.TypeReg {
				man.Files = append(man.Files, ManifestFile{Path: strings.TrimPrefix(name, man.ID+"/"), Size: h.Size})
			}
			hdrs, data = append(hdrs, h), append(data, body)
		}
		var mb []byte
		switch mode {
		case 2:
			if len(man.Files) > 0 {
				man.Files = man.Files[:len(man.Files)-1]
			}
		case 3:
			if len(hdrs) == 0 {
				return nil, false
			}
			mb, hdrs, data = data[0], hdrs[1:], data[1:]
		}
		if mb == nil {
			mb, _ = json.Marshal(man)
		}
		tw := tar.NewWriter(&tarBytes)
		hdrs = append([]tar.Header{{Typeflag: tar.TypeReg, Name: ArchiveManifestName, Mode: 0o600, Size: int64(len(mb))}}, hdrs...)
		data = append([][]byte{mb}, data...)
		for i := range hdrs {
			if tw.WriteHeader(&hdrs[i]) != nil {
				return nil, false
			}
			if _, err := tw.Write(data[i]); err != nil {
				return nil, false
			}
		}
		if tw.Close() != nil {
			return nil, false
		}
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(tarBytes.Bytes())
	zw.Close()
	return buf.Bytes(), true
}

// TestFuzzArchiveImports: the archives FuzzImport builds from a
// description import, so its inputs reach past the checks of the format.
func TestFuzzArchiveImports(t *testing.T) {
	const id = "20261122-120000-abcd"
	spec := id + "/session.json\x000\x00{}\x00" + id + "/runs\x005\x00\x00" + id + "/runs/r.jsonl\x000\x00{}\n"
	arc, ok := fuzzArchive([]byte(spec), 1)
	if !ok {
		t.Fatal("no archive")
	}
	s, rep, err := newStore(t).Import(bytes.NewReader(arc), ImportOptions{})
	if err != nil || s.ID() != id || rep.Files != 2 {
		t.Fatalf("import: %+v %v", rep, err)
	}
}
