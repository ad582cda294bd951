package common

import "testing"

func TestLines(t *testing.T) {
	if Lines("") != 0 || Lines("a\nb") != 2 {
		t.Error("Lines")
	}
}
