package synth

import (
	"slices"
	"strings"
	"testing"
)

func TestParseRef(t *testing.T) {
	medium, _ := Lookup("synth-medium")
	cases := []struct {
		ref      string
		name     string
		features int
	}{
		{"synth-medium", "synth-medium", 100},
		{"synth-medium:features=8", "synth-medium:features=8", 8},
		{"synth-medium:features= 8", "synth-medium:features=8", 8},
		{"synth-medium:features=100", "synth-medium", 100}, // the preset's own width
		{"synth-tiny:features=1", "synth-tiny:features=1", 1},
		{"synth-tiny:features=65536", "synth-tiny:features=65536", MaxFeatures},
	}
	for _, tc := range cases {
		p, ok, err := ParseRef(tc.ref)
		if !ok || err != nil {
			t.Errorf("ParseRef(%q) = ok %v, %v", tc.ref, ok, err)
			continue
		}
		if p.Name != tc.name || p.Config.Name != tc.name || p.Config.Features != tc.features {
			t.Errorf("ParseRef(%q): name %q (config %q), %d features; want %q, %d",
				tc.ref, p.Name, p.Config.Name, p.Config.Features, tc.name, tc.features)
		}
		// Only the width changes.
		c := p.Config
		c.Name, c.Features = medium.Config.Name, medium.Config.Features
		if strings.HasPrefix(tc.ref, "synth-medium") && c != medium.Config {
			t.Errorf("ParseRef(%q) changed more than the width: %+v", tc.ref, p.Config)
		}
		if err := p.Config.Validate(); err != nil {
			t.Errorf("ParseRef(%q): %v", tc.ref, err)
		}
	}
}

func TestParseRefErrors(t *testing.T) {
	for _, tc := range []struct{ ref, want string }{
		{"synth-medium:", "nothing after"},
		{"synth-medium:features", "not KEY=VALUE"},
		{"synth-medium:features=", "not a whole number"},
		{"synth-medium:features=eight", "not a whole number"},
		{"synth-medium:features=8.5", "not a whole number"},
		{"synth-medium:features=0", "want 1 to 65536"},
		{"synth-medium:features=-3", "want 1 to 65536"},
		{"synth-medium:features=65537", "want 1 to 65536"},
		{"synth-medium:features=8,features=9", "set twice"},
		{"synth-medium:nodes=5", `unknown setting "nodes"`},
		{"synth-medium:features=8,", "not KEY=VALUE"},
	} {
		_, ok, err := ParseRef(tc.ref)
		if !ok || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseRef(%q) = ok %v, %v; want an error mentioning %q", tc.ref, ok, err, tc.want)
		}
	}
	for _, ref := range []string{"", "synth-nope", "synth-nope:features=8", "cora.npz", "C:/data/x.gsd", ":features=8"} {
		if _, ok, err := ParseRef(ref); ok || err != nil {
			t.Errorf("ParseRef(%q) = ok %v, %v; want no preset and no error", ref, ok, err)
		}
	}
}

// The width changes the feature matrix only: the graph, the labels and
// the split are drawn from streams of their own.
func TestFeatureWidthKeepsGraph(t *testing.T) {
	wide := testConfig()
	narrow := wide
	narrow.Features = 3
	a, b := generate(t, wide, 7), generate(t, narrow, 7)
	if b.NumFeatures != 3 || len(b.X) != 3*b.NumNodes() {
		t.Fatalf("narrow dataset has %d features, %d values", b.NumFeatures, len(b.X))
	}
	if !slices.Equal(a.Graph.Indptr, b.Graph.Indptr) || !slices.Equal(a.Graph.Indices, b.Graph.Indices) {
		t.Error("the feature width changed the graph")
	}
	if !slices.Equal(a.Y, b.Y) || !slices.Equal(a.Split.Train, b.Split.Train) ||
		!slices.Equal(a.Split.Valid, b.Split.Valid) || !slices.Equal(a.Split.Test, b.Split.Test) {
		t.Error("the feature width changed the labels or the split")
	}
}

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"synth-tiny", "synth-tiny:features=8", "synth-small:features=", "synth-medium:a=b,c",
		"synth-tiny:features=8,features=8", "x:y", "synth-products:features=99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		p, ok, err := ParseRef(ref)
		if !ok || err != nil {
			return
		}
		if p.Config.Features < 1 || p.Config.Features > MaxFeatures || p.Name != p.Config.Name {
			t.Fatalf("ParseRef(%q) = %+v", ref, p)
		}
		// The canonical name reads back as the same preset.
		q, ok, err := ParseRef(p.Name)
		if !ok || err != nil || q != p {
			t.Fatalf("ParseRef(%q) = %+v, but its name %q reads %+v, %v, %v", ref, p, p.Name, q, ok, err)
		}
	})
}
