package common

import (
	"slices"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

func TestStagesFromProfile(t *testing.T) {
	if !slices.Equal(Stages, profile.StageNames()) {
		t.Errorf("Stages %v, profile has %v", Stages, profile.StageNames())
	}
	for _, opts := range []Options{{}, {NoColor: true, ASCII: true}} {
		s := NewStyles(opts)
		for _, name := range Stages {
			if _, ok := s.Stage[name]; !ok {
				t.Errorf("%+v: stage %s has no style", opts, name)
			}
			if g := s.Glyph(name); g == "?" {
				t.Errorf("%+v: stage %s has no glyph", opts, name)
			}
		}
		if len(s.Stage) != len(Stages) || len(s.StageGlyph) != len(Stages) {
			t.Errorf("%+v: %d styles and %d glyphs for %d stages", opts, len(s.Stage), len(s.StageGlyph), len(Stages))
		}
	}
}

// Every status has its style, so that adding one to profile.Statuses
// without styling it fails here.
func TestStatusStyles(t *testing.T) {
	s := NewStyles(Options{})
	for _, st := range profile.Statuses() {
		if _, ok := s.status(st); !ok {
			t.Errorf("status %q has no style in Styles.Status", st)
		}
	}
	if _, ok := s.status("odd"); ok {
		t.Error(`status "odd" has a style`)
	}
}
