package load

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gnnscope/gnnscope/gnn/data"
)

// Summary describes a dataset's size and shape.
type Summary struct {
	Name     string `json:"name"`
	Nodes    int    `json:"nodes"`
	Edges    int64  `json:"edges"` // stored (directed) entries; an undirected edge counts twice
	Features int    `json:"features"`
	Classes  int    `json:"classes"`

	Degree   DegreeStats `json:"degree"`
	Isolated int         `json:"isolated_nodes"` // nodes without neighbors

	// Homophily is the edge homophily: the fraction of stored entries
	// between two labeled nodes whose labels agree. Nil when no entry joins
	// two labeled nodes.
	Homophily *float64 `json:"edge_homophily"`

	Labeled     int   `json:"labeled_nodes"`
	ClassCounts []int `json:"class_counts"` // nodes per class

	// Split holds the sizes of the dataset's own split; nil when it has none.
	Split *SplitSizes `json:"split,omitempty"`
}

// DegreeStats summarizes the number of entries per row.
type DegreeStats struct {
	Min    int     `json:"min"`
	Median float64 `json:"median"`
	Mean   float64 `json:"mean"`
	Max    int     `json:"max"`
}

// SplitSizes counts the nodes of each part of a split.
type SplitSizes struct {
	Train int `json:"train"`
	Valid int `json:"valid"`
	Test  int `json:"test"`
}

// Stats computes the summary of d in time linear in its size.
func Stats(d *data.Dataset) Summary {
	g := d.Graph
	s := Summary{
		Name: d.Name, Nodes: g.N, Edges: g.NumEdges(), Features: d.NumFeatures, Classes: d.NumClasses,
		ClassCounts: make([]int, max(d.NumClasses, 0)),
	}
	if g.N > 0 {
		// Degree histogram: the median without sorting.
		maxDeg := 0
		s.Degree.Min = int(g.Indptr[1] - g.Indptr[0])
		for v := 0; v < g.N; v++ {
			deg := int(g.Indptr[v+1] - g.Indptr[v])
			maxDeg = max(maxDeg, deg)
			s.Degree.Min = min(s.Degree.Min, deg)
			if deg == 0 {
				s.Isolated++
			}
		}
		hist := make([]int, maxDeg+1)
		for v := 0; v < g.N; v++ {
			hist[g.Indptr[v+1]-g.Indptr[v]]++
		}
		s.Degree.Max = maxDeg
		s.Degree.Mean = float64(s.Edges) / float64(g.N)
		s.Degree.Median = (float64(nth(hist, (g.N-1)/2)) + float64(nth(hist, g.N/2))) / 2
	}
	for _, y := range d.Y {
		if y >= 0 && int(y) < len(s.ClassCounts) {
			s.ClassCounts[y]++
			s.Labeled++
		}
	}
	var same, both int64
	if len(d.Y) == g.N {
		for v := 0; v < g.N; v++ {
			yv := d.Y[v]
			if yv < 0 {
				continue
			}
			for _, u := range g.Indices[g.Indptr[v]:g.Indptr[v+1]] {
				if yu := d.Y[u]; yu >= 0 {
					both++
					if yu == yv {
						same++
					}
				}
			}
		}
	}
	if both > 0 {
		h := float64(same) / float64(both)
		s.Homophily = &h
	}
	if d.Split != nil {
		s.Split = &SplitSizes{Train: len(d.Split.Train), Valid: len(d.Split.Valid), Test: len(d.Split.Test)}
	}
	return s
}

// nth returns the k-th smallest value (0-based) described by a histogram.
func nth(hist []int, k int) int {
	for v, c := range hist {
		if k < c {
			return v
		}
		k -= c
	}
	return len(hist) - 1
}

// JSON returns the summary as indented JSON.
func (s Summary) JSON() ([]byte, error) { return json.MarshalIndent(s, "", "  ") }

// Text returns the summary as aligned, human-readable lines.
func (s Summary) Text() string {
	var b strings.Builder
	row := func(k, format string, args ...any) {
		fmt.Fprintf(&b, "%-15s "+format+"\n", append([]any{k + ":"}, args...)...)
	}
	row("dataset", "%s", s.Name)
	row("nodes", "%s", thousands(int64(s.Nodes)))
	und := ""
	if s.Edges%2 == 0 {
		und = fmt.Sprintf(" (%s undirected if symmetric)", thousands(s.Edges/2))
	}
	row("edges", "%s stored entries%s", thousands(s.Edges), und)
	row("features", "%d", s.Features)
	row("classes", "%d", s.Classes)
	row("degree", "min %d, median %g, mean %.2f, max %s", s.Degree.Min, s.Degree.Median, s.Degree.Mean, thousands(int64(s.Degree.Max)))
	row("isolated", "%s nodes (%s)", thousands(int64(s.Isolated)), percent(s.Isolated, s.Nodes))
	if s.Homophily != nil {
		row("homophily", "%.3f (edge homophily)", *s.Homophily)
	} else {
		row("homophily", "n/a (no edge joins two labeled nodes)")
	}
	row("labeled", "%s nodes (%s)", thousands(int64(s.Labeled)), percent(s.Labeled, s.Nodes))
	if s.Split != nil {
		row("split", "train %s, valid %s, test %s", thousands(int64(s.Split.Train)), thousands(int64(s.Split.Valid)), thousands(int64(s.Split.Test)))
	} else {
		row("split", "none (a per-class or fractional split is made at training time)")
	}
	b.WriteString("class sizes:\n")
	for c, n := range s.ClassCounts {
		fmt.Fprintf(&b, "  %4d  %10s  %6s\n", c, thousands(int64(n)), percent(n, s.Labeled))
	}
	return b.String()
}

func percent(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}

// thousands formats n with comma separators: 2449029 -> "2,449,029".
func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
