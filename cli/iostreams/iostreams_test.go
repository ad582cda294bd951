package iostreams

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteJSON(t *testing.T) {
	ios, _, out, _ := Test()
	if err := ios.WriteJSON(map[string]any{"a": 1, "b": []int{2}}); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"a\": 1,\n  \"b\": [\n    2\n  ]\n}\n"; out.String() != want {
		t.Fatalf("got %q, want %q", out, want)
	}
}

func TestTerminalsAndColor(t *testing.T) {
	ios, _, _, _ := Test()
	if ios.IsStdinTTY() || ios.IsStdoutTTY() || ios.IsStderrTTY() || ios.ColorEnabled() {
		t.Fatal("test streams taken for terminals")
	}
	ios.SetStdoutTTY(true)
	if !ios.ColorEnabled() {
		t.Fatal("no color on a terminal")
	}
	ios.SetNoColor(true)
	if ios.ColorEnabled() || !ios.NoColor() {
		t.Fatal("color with --no-color")
	}
	t.Setenv("NO_COLOR", "1")
	if !System().NoColor() {
		t.Fatal("NO_COLOR ignored")
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Fatal("a regular file is a terminal")
	}
}

func TestProgressOffTerminal(t *testing.T) {
	ios, _, _, errOut := Test()
	p := ios.NewProgress(false)
	p.Stage("load", 0)
	p.Stage("load", 0.5)
	p.Stage("load", 1)
	p.Stage("load", 1)
	p.Line(false, "epoch %d", 1) // the first line is due
	p.Line(false, "epoch %d", 2) // within two seconds: not shown
	p.Line(true, "epoch %d", 3)  // final: shown
	p.Printf("note\n")
	p.Warn("careful")
	want := "load             done\nepoch 1\nepoch 3\nnote\nwarning: careful\n"
	if errOut.String() != want {
		t.Fatalf("got %q, want %q", errOut, want)
	}
}

func TestProgressOnTerminal(t *testing.T) {
	ios, _, _, errOut := Test()
	ios.SetStderrTTY(true)
	p := ios.NewProgress(false)
	p.Stage("load", 0.5)
	p.Stage("save", 1)
	p.Line(false, "epoch 1")
	p.Done()
	want := "\r\033[Kload              50%\n\r\033[Ksave             100%\r\033[Kepoch 1\n"
	if errOut.String() != want {
		t.Fatalf("got %q, want %q", errOut, want)
	}
}

func TestProgressQuiet(t *testing.T) {
	ios, _, _, errOut := Test()
	p := ios.NewProgress(true)
	p.Stage("load", 1)
	p.Line(true, "epoch 1")
	p.Printf("note\n")
	p.Done()
	if errOut.Len() != 0 {
		t.Fatalf("quiet progress wrote %q", errOut)
	}
	p.Warn("careful")
	if errOut.String() != "warning: careful\n" {
		t.Fatalf("warning: %q", errOut)
	}
}
