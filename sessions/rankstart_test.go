package sessions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gnnscope/gnnscope/profile"
)

// Each rank's run_start names its node; a collector's clock report is
// read from the line as it stands; a rank without node information says
// so.
func TestRankStarts(t *testing.T) {
	_, s := ddpSession(t)
	r2 := `{"t":"run_start","v":1,"run":"ddp","wall":"2026-11-25T10:00:00.25Z","rank":2,"world":3,"node":"gpu-b","node_rank":1,"host":{"hostname":"gpu-b.local"},"clock":{"ts":5,"offset":-250000000,"delay":300000,"samples":8}}
`
	if err := os.WriteFile(s.RankJournalPath("ddp", 2), []byte(r2), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.RankJournalPath("ddp", 3), []byte("not json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := s.RankStarts("ddp")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d ranks, want 3 (the journal without run_start left out): %+v", len(got), got)
	}
	if got[0].Rank != 0 || got[0].HasNode || got[0].Clock != nil || got[1].Rank != 1 || got[1].HasNode {
		t.Errorf("ranks 0 and 1: %+v %+v", got[0], got[1])
	}
	g := got[2]
	if g.Rank != 2 || !g.HasNode || g.Node != "gpu-b" || g.NodeRank != 1 || g.Host != "gpu-b.local" {
		t.Errorf("rank 2: %+v", g)
	}
	if g.Clock == nil || g.Clock.Offset != -250000000 || g.Clock.Delay != 300000 || g.Clock.Samples != 8 || g.Clock.Uncertainty() != 150000 {
		t.Errorf("rank 2's clock: %+v", g.Clock)
	}
	if _, err := s.RankStarts("../x"); err == nil {
		t.Error("a run name outside the store is read")
	}
}

// A live tail reports each rank's run_start as it reads it.
func TestRunTailerRankStarts(t *testing.T) {
	_, s := ddpSession(t)
	l, err := s.Live("ddp", TailOptions{Alive: func() bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got := l.RankStarts(); len(got) != 0 {
		t.Errorf("before reading: %+v", got)
	}
	rt := l.src.(*RunTailer)
	if _, err := rt.Poll(); err != nil {
		t.Fatal(err)
	}
	got := l.RankStarts()
	if len(got) != 2 || got[0].Rank != 0 || got[1].Rank != 1 {
		t.Errorf("after a poll: %+v", got)
	}
}

// A host name is shown without control characters, and cut when longer
// than any host's.
func TestRankStartHostName(t *testing.T) {
	e := profile.Event{T: profile.TypeRunStart, Node: "gpu\x1b[2J\n-b", Host: &profile.Host{Hostname: strings.Repeat("é", 200)}}
	rs := RankStartOf(&e)
	if rs.Node != "gpu?[2J?-b" || !rs.HasNode {
		t.Errorf("node %q", rs.Node)
	}
	if len(rs.Host) > maxHostName || !utf8.ValidString(rs.Host) {
		t.Errorf("host of %d bytes, valid %v", len(rs.Host), utf8.ValidString(rs.Host))
	}
}

// Whatever a rank journal's first line holds, reading its run_start
// neither fails nor panics, and a clock is read only from an object.
func FuzzRankStart(f *testing.F) {
	f.Add([]byte(`{"t":"run_start","rank":2,"node":"a","node_rank":1,"clock":{"offset":-5,"delay":3,"samples":8}}` + "\n"))
	f.Add([]byte(`{"t":"run_start","clock":"x"}`))
	f.Add([]byte("\x00\xff{"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "j.jsonl")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		rs, ok, err := readRankStart(RankJournal{Rank: 3, Path: path})
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if ok && rs.Rank != 3 {
			t.Errorf("rank %d", rs.Rank)
		}
	})
}
