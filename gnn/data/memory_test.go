package data

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMeminfoAvailable(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "meminfo")
	write := func(s string) {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("MemTotal:       16384000 kB\nMemFree:         1000 kB\nMemAvailable:    8192000 kB\n")
	if got := meminfoAvailable(p); got != 8192000*1024 {
		t.Errorf("MemAvailable: got %d", got)
	}
	write("MemTotal: 100 kB\n")
	if got := meminfoAvailable(p); got != 0 {
		t.Errorf("no MemAvailable: got %d, want 0 (unknown)", got)
	}
	write("MemAvailable: lots kB\n")
	if got := meminfoAvailable(p); got != 0 {
		t.Errorf("garbage: got %d", got)
	}
	if got := meminfoAvailable(filepath.Join(dir, "none")); got != 0 {
		t.Errorf("missing file: got %d", got)
	}
}

func TestCgroupAvailable(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if got := cgroupAvailable(dir); got != 0 {
		t.Errorf("no cgroup files: got %d", got)
	}
	write("memory.max", "max\n")
	write("memory.current", "1000\n")
	if got := cgroupAvailable(dir); got != 0 {
		t.Errorf("no limit: got %d", got)
	}
	write("memory.max", "5000\n")
	if got := cgroupAvailable(dir); got != 4000 {
		t.Errorf("limit 5000, used 1000: got %d", got)
	}
	write("memory.current", "9000\n")
	if got := cgroupAvailable(dir); got != 1 {
		t.Errorf("over the limit: got %d, want 1", got)
	}
}

func TestCheckAlloc(t *testing.T) {
	if err := CheckAlloc("x", 1<<20, 1<<20); err != nil {
		t.Errorf("exactly at the limit: %v", err)
	}
	err := CheckAlloc("the dense feature matrix (2708×6000000 float32)", 65e9, 1<<30)
	if err == nil || !strings.Contains(err.Error(), "dense feature matrix") ||
		!strings.Contains(err.Error(), "60.5 GiB") || !strings.Contains(err.Error(), "memory limit (1.0 GiB)") {
		t.Errorf("65 GB against 1 GiB: %v", err)
	}
	if avail := AvailableMemory(); avail > 0 {
		if err := CheckAlloc("x", avail*4, 0); err == nil || !strings.Contains(err.Error(), "available memory") {
			t.Errorf("four times the available memory: %v", err)
		}
	}
}

func TestAvailableMemoryUnderAddressLimit(t *testing.T) {
	left := addressSpaceLeft()
	if left == 0 {
		t.Skip("no address-space limit (ulimit -v) in this process")
	}
	if avail := AvailableMemory(); avail <= 0 || avail > left {
		t.Errorf("available %d, but only %d bytes of address space are left", avail, left)
	}
}
