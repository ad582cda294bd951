package cmdutil

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseInts(t *testing.T) {
	for in, want := range map[string][]int{"25,10": {25, 10}, " 5 , ,-3,": {5, -3}, "+7": {7}} {
		if got, err := ParseInts(in); err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseInts(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if s := JoinInts([]int{25, -1, 0}); s != "25,-1,0" {
		t.Errorf("JoinInts: %q", s)
	}
	for _, in := range []string{"", " , ", "1,x", "1.5", "99999999999999999999", "1 2"} {
		if got, err := ParseInts(in); err == nil {
			t.Errorf("ParseInts(%q) = %v, want an error", in, got)
		}
	}
}

// FuzzParseInts: the --fanout and --threads lists. An accepted list has
// one value per non-empty item, in order, and reads back from its own
// rendering; a refused one names the bad item or says the list is empty.
// Run: go test -run x -fuzz FuzzParseInts -fuzztime 20s ./cli/cmdutil/
func FuzzParseInts(f *testing.F) {
	for _, s := range []string{"25,10", "15, 10, 5", "", ",", "-1", "+3", "0x10", "1e3", "9223372036854775807",
		"9223372036854775808", "1,,2", "\t4\n", "１"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseInts(s)
		var items []string
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				items = append(items, p)
			}
		}
		if err != nil {
			if msg := err.Error(); len(items) > 0 && !slices.ContainsFunc(items, func(p string) bool {
				return strings.Contains(msg, strconv.Quote(p))
			}) {
				t.Fatalf("ParseInts(%q): error %q names no item", s, msg)
			}
			return
		}
		if len(got) == 0 || len(got) != len(items) {
			t.Fatalf("ParseInts(%q) = %v for items %q", s, got, items)
		}
		for i, p := range items {
			if v, err := strconv.Atoi(p); err != nil || v != got[i] {
				t.Fatalf("ParseInts(%q)[%d] = %d, item %q", s, i, got[i], p)
			}
		}
		if again, err := ParseInts(JoinInts(got)); err != nil || !slices.Equal(again, got) {
			t.Fatalf("%v reads back as %v, %v", got, again, err)
		}
	})
}

func TestChoices(t *testing.T) {
	type fruit string
	notes := map[fruit]string{"pear": "ripe"}
	for _, c := range []struct {
		values []fruit
		last   string
		want   string
	}{
		{nil, " or ", ""},
		{[]fruit{"pear"}, " or ", "pear (ripe)"},
		{[]fruit{"apple", "pear"}, " or ", "apple or pear (ripe)"},
		{[]fruit{"apple", "pear", "plum"}, ", or ", "apple, pear (ripe), or plum"},
		{[]fruit{"apple", "plum", "fig"}, ", ", "apple, plum, fig"},
	} {
		if got := Choices(c.values, c.last, notes); got != c.want {
			t.Errorf("Choices(%q, %q) = %q, want %q", c.values, c.last, got, c.want)
		}
	}
}
