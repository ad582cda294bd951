package ui

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/tui"
)

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestUTF8Locale(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{"LANG": "en_US.UTF-8"}, true},
		{map[string]string{"LANG": "C.utf8"}, true},
		{map[string]string{"LC_CTYPE": "de_DE.UTF-8", "LANG": "C"}, true},
		{map[string]string{"LC_ALL": "C", "LANG": "en_US.UTF-8"}, false},
		{map[string]string{"LANG": "C"}, false},
		{map[string]string{"LANG": "POSIX"}, false},
		{map[string]string{"LANG": "de_DE.ISO-8859-1"}, false},
		{map[string]string{"LC_ALL": "fr_FR"}, false},
		{nil, false}, // nothing set: the C locale
	} {
		if got := utf8Locale(env(c.env)); got != c.want {
			t.Errorf("%v: utf8Locale = %v", c.env, got)
		}
	}
}

// TestLocalePicksASCII: the repro, LANG=C or a Latin-1 locale: the
// workbench opens with 7-bit characters only; a UTF-8 locale keeps them.
func TestLocalePicksASCII(t *testing.T) {
	for _, c := range []struct {
		lang  string
		ascii bool
	}{{"C", true}, {"de_DE.ISO-8859-1", true}, {"en_US.UTF-8", false}} {
		ios, _, _, _ := iostreams.Test()
		var got *tui.Options
		opts := &UIOptions{IO: ios, Getenv: env(map[string]string{"LANG": c.lang, "TERM": "xterm"}),
			Open: func(_ context.Context, o tui.Options) error { got = &o; return nil }}
		if err := uiRun(opts); err != nil || got == nil {
			t.Fatalf("LANG=%s: %v, opened %v", c.lang, err, got != nil)
		}
		if got.ASCII != c.ascii {
			t.Errorf("LANG=%s: ASCII = %v", c.lang, got.ASCII)
		}
	}
}

// TestDumbTerminalFallsBack: the repro, TERM=dumb: no full-screen
// workbench; a message says why, and the headless view is printed.
func TestDumbTerminalFallsBack(t *testing.T) {
	ios, _, _, errOut := iostreams.Test()
	var headless []string
	opts := &UIOptions{IO: ios, Session: "last", Getenv: env(map[string]string{"TERM": "dumb", "LANG": "C.UTF-8"}),
		Open:     func(context.Context, tui.Options) error { return errors.New("the workbench opened") },
		Headless: func(s string) error { headless = append(headless, s); return nil }}
	if err := uiRun(opts); err != nil {
		t.Fatal(err)
	}
	if len(headless) != 1 || headless[0] != "last" {
		t.Errorf("headless views %q", headless)
	}
	if msg := errOut.String(); !strings.Contains(msg, "TERM=dumb") || !strings.Contains(msg, "session last") {
		t.Errorf("message %q", msg)
	}
}
