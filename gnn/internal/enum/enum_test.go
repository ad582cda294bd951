package enum

import "testing"

type color string

func TestJoin(t *testing.T) {
	for _, c := range []struct {
		in   []color
		want string
	}{
		{nil, ""},
		{[]color{"red"}, "red"},
		{[]color{"red", "green", "blue"}, "red, green, blue"},
	} {
		if got := Join(c.in, ", "); got != c.want {
			t.Errorf("Join(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestOr(t *testing.T) {
	for _, c := range []struct {
		in   []color
		want string
	}{
		{nil, ""},
		{[]color{"red"}, "red"},
		{[]color{"red", "green"}, "red or green"},
		{[]color{"red", "green", "blue"}, "red, green or blue"},
	} {
		if got := Or(c.in); got != c.want {
			t.Errorf("Or(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
