package data

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// rssFileKB is the process's resident file-backed memory, from
// /proc/self/status.
func rssFileKB(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatalf("RssFile: %q: %v", rest, err)
			}
			return n
		}
	}
	t.Skip("no RssFile in /proc/self/status")
	return 0
}

// TestDropFeaturePages maps a dataset with 8 MB of features, reads them
// all, and drops their pages: the process's resident file memory falls by
// about their size, and the features read back the same afterwards.
func TestDropFeaturePages(t *testing.T) {
	want := ringDataset(4000, 500, 5) // 4000 x 500 float32 = 8 MB
	_, d := saveMapped(t, want)
	defer Release(d)
	if !slices.Equal(d.X, want.X) { // every page read in
		t.Fatal("mapped features differ from the saved ones")
	}
	before := rssFileKB(t)
	dropped, err := DropFeaturePages(d)
	if err != nil || !dropped {
		t.Fatalf("DropFeaturePages = %v, %v; want true, nil", dropped, err)
	}
	after := rssFileKB(t)
	if fell := before - after; fell < 7000 {
		t.Errorf("resident file memory fell by %d kB (from %d), want about 8000", fell, before)
	}
	if !slices.Equal(d.X, want.X) {
		t.Fatal("features differ after their pages were dropped")
	}
}

// TestDropFeaturePagesLeavesOtherMemory checks that only a mapping is
// dropped: features read into the heap, or replaced by a heap copy, are
// left as they are.
func TestDropFeaturePagesLeavesOtherMemory(t *testing.T) {
	want := ringDataset(4000, 500, 5)
	path, mapped := saveMapped(t, want)
	defer Release(mapped)
	read, err := load(path, 1<<40) // read, never mapped
	if err != nil {
		t.Fatal(err)
	}
	defer Release(read)
	mapped.X = slices.Clone(want.X)
	for _, d := range []*Dataset{read, mapped, want} {
		if dropped, err := DropFeaturePages(d); dropped || err != nil {
			t.Fatalf("DropFeaturePages = %v, %v; want false, nil", dropped, err)
		}
		if !slices.Equal(d.X, want.X) {
			t.Fatal("features changed")
		}
	}
}
