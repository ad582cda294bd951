package draw

import (
	"strings"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Pen is a style reduced to the escape sequences that open and close it.
type Pen struct{ Open, Close string }

// PenOf takes a style's sequences by rendering a one-cell sentinel once.
// Styles with padding, borders or widths are not pens: only text
// attributes and colors survive.
func PenOf(st lipgloss.Style) Pen {
	const sentinel = "X"
	s := st.Render(sentinel)
	i := strings.Index(s, sentinel)
	if i < 0 {
		return Pen{}
	}
	return Pen{Open: s[:i], Close: s[i+len(sentinel):]}
}

// Paint returns s in the pen's style.
func (p Pen) Paint(s string) string {
	if p.Open == "" || s == "" {
		return s
	}
	return p.Open + s + p.Close
}

// Write appends s in the pen's style to b.
func (p Pen) Write(b *strings.Builder, s string) {
	if p.Open == "" {
		b.WriteString(s)
		return
	}
	b.WriteString(p.Open)
	b.WriteString(s)
	b.WriteString(p.Close)
}

// Width is the display width of s (escape sequences excluded).
func Width(s string) int {
	if n, ok := narrowWidth(s); ok {
		return n
	}
	return ansi.StringWidth(s)
}

// narrowWidth counts the cells of s when every character in it is one
// cell wide for sure: ASCII, Latin, and the ranges charts draw with
// (arrows, box drawing, blocks, geometric shapes, dingbats, braille).
// Escape sequences (CSI ... final byte) count nothing. ok is false when
// s has anything else (combining marks, wide characters, other
// escapes), for ansi.StringWidth to measure.
func narrowWidth(s string) (n int, ok bool) {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b:
			if i+1 >= len(s) || s[i+1] != '[' {
				return 0, false
			}
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j + 1
			continue
		case c >= 0x20 && c < 0x7f:
			n++
			i++
			continue
		case c < 0x80:
			return 0, false // control characters
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r >= 0xa0 && r < 0x300, // Latin-1 and Latin Extended
			r == 0x2026,               // …
			r >= 0x2190 && r < 0x2200, // arrows
			r >= 0x2500 && r < 0x2600, // box drawing, blocks, geometric shapes
			r >= 0x2700 && r < 0x2760, // dingbats (✖)
			r >= 0x2800 && r < 0x2900: // braille
			n++
			i += size
		default:
			return 0, false
		}
	}
	return n, true
}

// PadRight pads s with spaces to w cells, cutting it when wider.
func PadRight(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := Width(s)
	if n > w {
		return ansi.Truncate(s, w, "")
	}
	return s + strings.Repeat(" ", w-n)
}

// PadLeft right-aligns s in w cells, cutting it when wider.
func PadLeft(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := Width(s)
	if n > w {
		return ansi.Truncate(s, w, "")
	}
	return strings.Repeat(" ", w-n) + s
}

// Cut shortens s to at most w cells, ending with tail when it cuts.
func Cut(s string, w int, tail string) string {
	if w <= 0 {
		return ""
	}
	if Width(s) <= w {
		return s
	}
	if Width(tail) >= w {
		tail = ""
	}
	return ansi.Truncate(s, w, tail)
}

// AxisLabels lays out a chart's x-axis labels in exactly w cells: left
// at the start, right at the end and mid centred between them, as in
// "ep 1   600 batches   ep 3". Right is dropped first when the three do
// not fit with a space each side of mid, then mid; what is left is cut
// to w.
func AxisLabels(left, mid, right string, w int) string {
	if Width(left)+Width(mid)+Width(right)+2 > w {
		right = ""
	}
	if Width(left)+Width(mid)+1 > w {
		mid = ""
	}
	if mid == "" {
		gap := w - Width(left) - Width(right)
		return PadRight(Cut(left+strings.Repeat(" ", max(gap, 0))+right, w, ""), w)
	}
	free := w - Width(left) - Width(mid) - Width(right)
	a := free / 2
	return PadRight(left+strings.Repeat(" ", a)+mid+strings.Repeat(" ", free-a)+right, w)
}

// Block fits lines into exactly w cells by h lines: each line padded or
// cut to w, missing lines blank, extra lines dropped.
func Block(lines []string, w, h int) []string {
	if w <= 0 || h <= 0 {
		return nil
	}
	out := make([]string, h)
	for i := range out {
		if i < len(lines) {
			out[i] = PadRight(lines[i], w)
		} else {
			out[i] = strings.Repeat(" ", w)
		}
	}
	return out
}

// Fit cuts text to at most w cells per line and h lines (no padding), so
// a view never wraps or scrolls the terminal however small it is.
func Fit(s string, w, h int) string {
	if w <= 0 || h <= 0 {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		if Width(l) > w {
			lines[i] = ansi.Truncate(l, w, "")
		}
	}
	return strings.Join(lines, "\n")
}

// Columns joins blocks side by side, each padded to its width, with sep
// between them. Every block is cut or padded to h lines.
func Columns(h int, sep string, widths []int, blocks ...[]string) []string {
	out := make([]string, h)
	var b strings.Builder
	for i := 0; i < h; i++ {
		b.Reset()
		for j, bl := range blocks {
			if j > 0 {
				b.WriteString(sep)
			}
			line := ""
			if i < len(bl) {
				line = bl[i]
			}
			b.WriteString(PadRight(line, widths[j]))
		}
		out[i] = b.String()
	}
	return out
}

// Wrap breaks plain text s (no escape sequences) into lines of at most w
// cells: at spaces where it can, inside a word longer than w where it
// must, and at every newline. Nothing of s but the spaces it breaks at is
// dropped, so a long error reads in full. It returns nil for w <= 0.
func Wrap(s string, w int) []string {
	if w <= 0 {
		return nil
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		line, lw := "", 0
		for _, word := range strings.Fields(para) {
			ww := Width(word)
			if lw > 0 && lw+1+ww <= w {
				line, lw = line+" "+word, lw+1+ww
				continue
			}
			if lw > 0 {
				out = append(out, line)
			}
			for ww > w { // a word longer than the line
				head := ansi.Truncate(word, w, "")
				if head == "" { // a character wider than the line
					_, size := utf8.DecodeRuneInString(word)
					head = word[:size]
				}
				out = append(out, head)
				word = word[len(head):]
				ww = Width(word)
			}
			line, lw = word, ww
		}
		if lw > 0 || len(out) == 0 || para == "" {
			out = append(out, line)
		}
	}
	return out
}
