package featcache

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gnnscope/gnnscope/profile/units"
)

// Budget is the cache's size: a number of bytes, or a share of the
// feature matrix's rows. The zero Budget is no cache.
type Budget struct {
	Bytes int64   // > 0: a byte budget
	Share float64 // > 0: a share of the rows, in (0, 1]
}

// ParseBudget reads a cache size: a size string ("0.1G", "512MiB", a
// number of bytes) or a percentage of the feature matrix ("20%"). "" and
// "0" are no cache.
func ParseBudget(s string) (Budget, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "0" {
		return Budget{}, nil
	}
	if p, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(v) || v < 0 || v > 100 {
			return Budget{}, fmt.Errorf("cache size %q: want a percentage from 0%% to 100%%", s)
		}
		return Budget{Share: v / 100}, nil
	}
	n, err := units.ParseSize(s)
	if err != nil {
		return Budget{}, fmt.Errorf("cache size %q: want a size such as 0.1G or 512MiB, or a share such as 20%%: %w", s, err)
	}
	if n < 0 {
		return Budget{}, fmt.Errorf("cache size %q is negative", s)
	}
	return Budget{Bytes: n}, nil
}

// IsZero reports whether the budget caches nothing.
func (b Budget) IsZero() bool { return b.Bytes <= 0 && b.Share <= 0 }

// Rows returns how many rows of a nodes×f float32 matrix the budget holds:
// floor(share·nodes), or the whole rows that fit the bytes; never more
// than nodes.
func (b Budget) Rows(nodes, f int) int {
	switch {
	case b.Share > 0:
		return min(int(b.Share*float64(nodes)), nodes)
	case b.Bytes > 0 && f > 0:
		return int(min(b.Bytes/(4*int64(f)), int64(nodes)))
	}
	return 0
}

// String writes the budget as ParseBudget reads it.
func (b Budget) String() string {
	switch {
	case b.Share > 0:
		return strconv.FormatFloat(b.Share*100, 'g', -1, 64) + "%"
	case b.Bytes > 0:
		return units.FormatSize(b.Bytes)
	}
	return "0"
}
