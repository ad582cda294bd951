package sessions

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gnnscope/gnnscope/profile"
)

// RankStart is what one rank's run_start says of where the rank ran:
// the views of a distributed run group its ranks by node with it.
type RankStart struct {
	Rank int
	// Node is the host name of the rank's machine and NodeRank that
	// machine's place among the job's nodes (run_start's node and
	// node_rank); HasNode is false when the run_start names neither.
	Node     string
	NodeRank int
	HasNode  bool
	// Host is run_start's host.hostname ("" when absent).
	Host string
	// Wall is the rank's wall-clock start (zero when unreadable).
	Wall time.Time
	// Clock is the collector's clock estimate for the rank, when its
	// run_start carries one (nil otherwise).
	Clock *profile.Clock
}

// RankStartOf returns what a run_start e says of its rank.
// Host names are shown as they are written, but for control characters
// (each a '?') and past maxHostName bytes (cut): a journal is anyone's.
func RankStartOf(e *profile.Event) RankStart {
	rs := RankStart{Rank: e.Rank, Node: hostName(e.Node), NodeRank: e.NodeRank, HasNode: e.Node != "" || e.NodeRank != 0, Clock: e.Clock}
	if e.Host != nil {
		rs.Host = hostName(e.Host.Hostname)
	}
	rs.Wall, _ = e.WallTime()
	return rs
}

// maxHostName is the longest host name RankStartOf keeps (DNS names
// are at most 253 bytes).
const maxHostName = 255

// hostName returns s without control characters, cut to maxHostName
// bytes at a character's start.
func hostName(s string) string {
	if len(s) > maxHostName {
		n := maxHostName
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
}

// RankStarts returns what each rank's run_start says of the rank, in the
// order of RankJournals: the first line of each rank's journal. A
// journal that is missing, or whose first line is no run_start, is left
// out.
func (s *Session) RankStarts(run string) ([]RankStart, error) {
	if err := ValidName(run); err != nil {
		return nil, fmt.Errorf("ranks of run: %w", err)
	}
	js, err := s.RankJournals(run)
	if err != nil {
		return nil, err
	}
	var out []RankStart
	for _, j := range js {
		rs, ok, err := readRankStart(j)
		if err != nil {
			return out, err
		}
		if ok {
			out = append(out, rs)
		}
	}
	return out, nil
}

// readRankStart reads the run_start of one rank's journal.
func readRankStart(j RankJournal) (RankStart, bool, error) {
	f, err := OpenRegular(j.Path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return RankStart{}, false, nil
		}
		return RankStart{}, false, fmt.Errorf("read journal %s: %w", j.Path, err)
	}
	defer f.Close()
	br := bufio.NewReader(io.LimitReader(f, MaxEventSize+1))
	line, err := br.ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return RankStart{}, false, fmt.Errorf("read journal %s: %w", j.Path, err)
	}
	line = bytes.TrimRight(line, "\r\n")
	var e profile.Event
	if profile.DecodeEvent(line, &e) != nil || e.T != profile.TypeRunStart {
		return RankStart{}, false, nil
	}
	rs := RankStartOf(&e)
	rs.Rank = j.Rank
	return rs, true, nil
}
