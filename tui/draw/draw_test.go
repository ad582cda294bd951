package draw

import (
	"slices"
	"strings"
	"testing"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// TestWidthMatchesAnsi: the fast path agrees with ansi.StringWidth on
// what the charts draw, styled or not, and defers on what it does not
// know.
func TestWidthMatchesAnsi(t *testing.T) {
	st := lipgloss.NewStyle().Foreground(lipgloss.Color("#FF0000")).Bold(true)
	for _, s := range []string{
		"", "plain ascii", "✖ 3 OOM", "●▶┄│─█▏·…←→⣿═", "⠀⣿⡇ budget", "café",
		st.Render("styled ✖") + " and " + st.Render("█████"), "宽字符", "e\u0301", "\x1b]8;;x\x1b\\link",
		"tab\there",
	} {
		if got, want := Width(s), ansi.StringWidth(s); got != want {
			t.Errorf("Width(%q) = %d, ansi says %d", s, got, want)
		}
	}
	if _, ok := narrowWidth("宽"); ok {
		t.Error("a wide character took the fast path")
	}
}

func TestPadCut(t *testing.T) {
	if got := PadRight("ab", 4); got != "ab  " {
		t.Errorf("PadRight: %q", got)
	}
	if got := PadLeft("ab", 4); got != "  ab" {
		t.Errorf("PadLeft: %q", got)
	}
	if got := PadRight("abcdef", 3); got != "abc" {
		t.Errorf("PadRight cut: %q", got)
	}
	if got := Cut("abcdef", 4, "…"); got != "abc…" {
		t.Errorf("Cut: %q", got)
	}
	if got := Fit("abc\ndefgh\ni", 3, 2); got != "abc\ndef" {
		t.Errorf("Fit: %q", got)
	}
	if got := Cut("abc", 0, "…"); got != "" {
		t.Errorf("Cut to 0: %q", got)
	}
	if got := Fit("abc", 0, 5); got != "" {
		t.Errorf("Fit to width 0: %q", got)
	}
	b := Block([]string{"x"}, 2, 2)
	if strings.Join(b, "|") != "x |  " {
		t.Errorf("Block: %q", b)
	}
}

func TestGrid(t *testing.T) {
	g := NewGrid(3, 1)
	g.Dot(0, 0, 1) // top left dot of cell 0
	g.Dot(1, 3, 1) // bottom right dot of cell 0
	g.Set(2, 0, 'x', 0)
	g.Dot(99, 99, 1) // outside: ignored
	lines := g.Lines([]Pen{{}, {Open: "<", Close: ">"}})
	if want := "<\u2881> x"; lines[0] != want {
		t.Errorf("grid line %q, want %q", lines[0], want)
	}
	g = NewGrid(4, 1)
	g.Line(0, 0, 7, 3, 1)
	if l := g.Lines(nil)[0]; ansi.StringWidth(l) != 4 || strings.Contains(l, " ") {
		t.Errorf("diagonal line leaves gaps: %q", l)
	}
}

func TestFormats(t *testing.T) {
	if got := Clock(83*time.Second + 450*time.Millisecond); got != "1:23.4" {
		t.Errorf("Clock: %q", got)
	}
	for v, want := range map[float64]string{0: "0.00", 0.1234: "0.123", 1.5: "1.50", 12.34: "12.3", 123.4: "123", 12345: "12.3k", 2.5e6: "2.5M"} {
		if got := Num(v); got != want {
			t.Errorf("Num(%v) = %q, want %q", v, got, want)
		}
	}
	if Secs(0) != "-" || Secs(0.5) != "0.500" || Secs(12.345) != "12.35" || Secs(1234) != "1234" {
		t.Error("Secs")
	}
}

func TestBresenham(t *testing.T) {
	type pt struct{ x, y int }
	for _, c := range []struct {
		x0, y0, x1, y1 int
		want           []pt
	}{
		{0, 0, 3, 1, []pt{{0, 0}, {1, 0}, {2, 1}, {3, 1}}},
		{2, 2, 2, 2, []pt{{2, 2}}},
		{1, 3, 1, 0, []pt{{1, 3}, {1, 2}, {1, 1}, {1, 0}}},
		{3, 0, 0, 3, []pt{{3, 0}, {2, 1}, {1, 2}, {0, 3}}},
	} {
		var got []pt
		bresenham(c.x0, c.y0, c.x1, c.y1, func(x, y int) { got = append(got, pt{x, y}) })
		if !slices.Equal(got, c.want) {
			t.Errorf("(%d,%d)-(%d,%d): %v, want %v", c.x0, c.y0, c.x1, c.y1, got, c.want)
		}
	}
}

// Wrap keeps every character but the spaces it breaks at: an error cut
// mid-number would mislead.
func TestWrap(t *testing.T) {
	msg := "batch 0: alloc 39174x64: out of memory: requested 10027008 bytes with 10470144 live over the budget 3145728"
	for _, w := range []int{1, 7, 10, 24, 80, 200} {
		lines := Wrap(msg, w)
		for _, l := range lines {
			if Width(l) > w {
				t.Fatalf("w=%d: line %q wider", w, l)
			}
		}
		if got := strings.Join(lines, ""); strings.ReplaceAll(got, " ", "") != strings.ReplaceAll(msg, " ", "") {
			t.Fatalf("w=%d: lost text: %q", w, lines)
		}
		if w >= 10 && !strings.Contains(strings.Join(lines, "\n"), "3145728") {
			t.Errorf("w=%d: the budget is cut: %q", w, lines)
		}
	}
	if got := Wrap("a\n\nb", 10); !slices.Equal(got, []string{"a", "", "b"}) {
		t.Errorf("paragraphs: %q", got)
	}
	if got := Wrap("x", 0); got != nil {
		t.Errorf("w=0: %q", got)
	}
	if got := Wrap("日本語", 1); strings.Join(got, "") != "日本語" {
		t.Errorf("wide characters: %q", got)
	}
}

// TestAxisLabels: the labels fill exactly w cells, mid centred; right
// goes first when they do not fit, then mid, then left is cut.
func TestAxisLabels(t *testing.T) {
	for _, c := range []struct {
		w    int
		want string
	}{
		{24, "ep 1   9 batches    ep 3"},
		{18, "ep 1  9 batches   "},
		{15, "ep 1 9 batches "},
		{13, "ep 1         "},
		{3, "ep "},
		{0, ""},
	} {
		if got := AxisLabels("ep 1", "9 batches", "ep 3", c.w); got != c.want {
			t.Errorf("w %d: %q, want %q", c.w, got, c.want)
		}
	}
	if got := AxisLabels("ep 1", "", "ep 3", 10); got != "ep 1  ep 3" {
		t.Errorf("without mid: %q", got)
	}
}
