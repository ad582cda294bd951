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
