package explain

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// table is a small table written as aligned text or as a Markdown table.
type table struct {
	header []string
	right  []bool // right-aligned columns
	rows   [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// write writes the table, indented by indent in text.
func (t *table) write(w io.Writer, md bool, indent string) error {
	if md {
		return t.writeMD(w)
	}
	width := make([]int, len(t.header))
	for _, r := range append([][]string{t.header}, t.rows...) {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range append([][]string{t.header}, t.rows...) {
		var line strings.Builder
		line.WriteString(indent)
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				line.WriteString("  ")
			}
			if t.right[i] {
				line.WriteString(pad + c)
			} else {
				line.WriteString(c + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (t *table) writeMD(w io.Writer) error {
	var b strings.Builder
	b.WriteString("\n| " + strings.Join(t.header, " | ") + " |\n|")
	for i := range t.header {
		if t.right[i] {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func secs(v float64) string { return fmt.Sprintf("%.3f", v) }

func pct(v float64) string { return fmt.Sprintf("%.0f %%", 100*v) }
