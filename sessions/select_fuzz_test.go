package sessions

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fuzzStore makes a store whose session ids share prefixes and sort in
// the reverse order of their creation, with a folder named "last"
// created last (no session id), and whose sessions have runs that share prefixes too:
// declared variants, a journal of a run that is not a variant, and a
// distributed run with a rank journal.
func fuzzStore(f *testing.F) (*Store, []string, []string) {
	st, err := Open(filepath.Join(f.TempDir(), "root"))
	if err != nil {
		f.Fatal(err)
	}
	ids := []string{"20261123-000000-0000", "20261122-153045-ab13", "20261122-153045-ab12", "last"}
	variants := []Variant{{Name: "baseline"}, {Name: "base-2"}, {Name: "optimized"}}
	at := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for i, id := range ids {
		s, err := st.Create(SessionMeta{ID: id, Variants: variants, Created: at.Add(time.Duration(i) * time.Hour)})
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range []string{"extra.jsonl", "ddp.jsonl", "ddp.rank1.jsonl", "optimized.pid"} {
			if err := os.WriteFile(filepath.Join(s.RunsDir(), file), nil, 0o600); err != nil {
				f.Fatal(err)
			}
		}
	}
	return st, ids, []string{"baseline", "base-2", "optimized", "ddp", "extra"}
}

// pick is the model of MatchSession and MatchRun: the name itself, else
// the only name it prefixes; "" and none or several prefixed are errors.
func pick(names []string, ref string) (string, error) {
	if ref != "" && slices.Contains(names, ref) {
		return ref, nil
	}
	var hits []string
	for _, n := range names {
		if ref != "" && strings.HasPrefix(n, ref) {
			hits = append(hits, n)
		}
	}
	switch len(hits) {
	case 0:
		return "", ErrNoMatch
	case 1:
		return hits[0], nil
	}
	return "", ErrAmbiguous
}

// FuzzSelectRun: a SESSION[/RUN] argument splits at its first slash, and
// resolves as the model above says (with "last" and "latest" for the
// newest session by creation time, never the folder named "last"): to a
// session of the store
// and runs of that session only, or to an error wrapping ErrNoMatch or
// ErrAmbiguous. Run:
// go test -run x -fuzz FuzzSelectRun -fuzztime 20s ./sessions/
func FuzzSelectRun(f *testing.F) {
	st, ids, runs := fuzzStore(f)
	for _, s := range []string{"", "/", "2026", "20261122", "20261122-153045-ab12", "20261123/b", "20261123/base",
		"20261123/ddp", "20261123/ddp.rank1", "last", "latest", "latest/opt", "l/extra", "la/", " 20261123 / x",
		"../../x", "20261123/../../x", "2026\x00", "20261123/baseline/x", "/baseline"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		sid, run := ParseRunRef(arg)
		trimmed := strings.TrimSpace(arg)
		if strings.Contains(sid, "/") || (run == "" && sid != trimmed && sid+"/" != trimmed) || (run != "" && sid+"/"+run != trimmed) {
			t.Fatalf("ParseRunRef(%q) = %q, %q", arg, sid, run)
		}
		// a folder named "last" is no session id: never matched;
		// "last" is the newest session by creation time, whatever names
		// the folders have
		valid := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return CheckID(id) != nil })
		wantID, wantErr := pick(valid, sid)
		if sid == "last" || sid == "latest" {
			wantID, wantErr = valid[len(valid)-1], nil // created last
		}
		s, err := st.MatchSession(sid)
		if (err == nil) != (wantErr == nil) || (err != nil && !errors.Is(err, wantErr)) {
			t.Fatalf("MatchSession(%q): %v, want %v", sid, err, wantErr)
		}
		if err != nil {
			return
		}
		if s.ID() != wantID {
			t.Fatalf("MatchSession(%q) = %s, want %s", sid, s.ID(), wantID)
		}
		refs, err := st.SelectRuns([]string{arg})
		if run == "" {
			if err != nil || len(refs) != len(runs) {
				t.Fatalf("SelectRuns(%q): %d runs, %v", arg, len(refs), err)
			}
			return
		}
		wantRun, wantErr := pick(runs, run)
		if (err == nil) != (wantErr == nil) || (err != nil && !errors.Is(err, wantErr)) {
			t.Fatalf("SelectRuns(%q): %v, want %v", arg, err, wantErr)
		}
		if err == nil && (len(refs) != 1 || refs[0].Session.ID() != wantID || refs[0].Run != wantRun) {
			t.Fatalf("SelectRuns(%q) = %v, want %s/%s", arg, refs, wantID, wantRun)
		}
	})
}
