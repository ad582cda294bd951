package runner

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Issue 37, point 11: a trainer that prints far more than the cap leaves
// a log of at most the cap, its first and last lines kept and a marker
// saying how much of the middle went, counted over every cut.
func TestCapLogKeepsHeadAndTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.log")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const max = 64 << 10
	var written int64
	line := 0
	for range 40 { // a trainer appending while the worker caps
		var b bytes.Buffer
		for b.Len() < 16<<10 {
			fmt.Fprintf(&b, "line %06d of the trainer's output\n", line)
			line++
		}
		n, _ := f.Write(b.Bytes())
		written += int64(n)
		if _, err := CapLog(path, max); err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(path); fi.Size() > max {
			t.Fatalf("log of %d bytes over the cap %d", fi.Size(), max)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if !strings.HasPrefix(text, "line 000000 ") || !strings.HasSuffix(text, fmt.Sprintf("line %06d of the trainer's output\n", line-1)) {
		t.Errorf("head or tail lost: %.40q ... %.40q", text, text[len(text)-40:])
	}
	if n := strings.Count(text, "[gnnscope: "); n != 1 {
		t.Fatalf("%d markers", n)
	}
	i := strings.Index(text, "[gnnscope: ") + len("[gnnscope: ")
	dropped, err := strconv.ParseInt(text[i:i+strings.IndexByte(text[i:], ' ')], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	markerLine := text[i-len("\n[gnnscope: ")+1:]
	markerLen := int64(strings.IndexByte(markerLine, '\n') + 2)
	if kept := int64(len(b)) - markerLen; kept+dropped != written {
		t.Errorf("kept %d + dropped %d != written %d", kept, dropped, written)
	}
	// the lines after the marker start whole
	after := text[i+strings.IndexByte(text[i:], '\n')+1:]
	if !strings.HasPrefix(after, "line ") {
		t.Errorf("the tail starts mid-line: %.30q", after)
	}
}

// A log under the cap, or a cap of 0, is left alone; a link in place of
// the log is not followed.
func TestCapLogLeavesSmallLogsAndLinks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.log")
	os.WriteFile(path, []byte("short\n"), 0o600)
	if n, err := CapLog(path, 1024); n != 0 || err != nil {
		t.Errorf("small log: %d, %v", n, err)
	}
	big := bytes.Repeat([]byte("x\n"), 4096)
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, big, 0o600)
	link := filepath.Join(dir, "link.log")
	os.Symlink(victim, link)
	if _, err := CapLog(link, 1024); err == nil {
		t.Error("a link was followed")
	}
	if b, _ := os.ReadFile(victim); !bytes.Equal(b, big) {
		t.Error("the link's target was cut")
	}
}

func TestExperimentLogCap(t *testing.T) {
	if (Experiment{}).LogCap() != DefaultLogMax || (Experiment{LogMax: 1}).LogCap() != MinLogMax || (Experiment{LogMax: 1 << 30}).LogCap() != 1<<30 {
		t.Error("LogCap")
	}
	sp, err := ParseSpec("x.toml", []byte("data = \"synth-tiny\"\nlog_max = \"1MiB\"\n"))
	if err != nil || sp.Experiment.LogMax != 1<<20 {
		t.Errorf("spec log_max: %+v, %v", sp, err)
	}
	if _, err := ParseSpec("x.toml", []byte("data = \"synth-tiny\"\nlog_max = \"1KiB\"\n")); err == nil || !strings.Contains(err.Error(), "log_max") {
		t.Errorf("tiny log_max: %v", err)
	}
}
