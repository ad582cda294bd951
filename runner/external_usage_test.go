package runner

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// TestExternalUsage is the repro of --cmd runs whose host was never
// checked and whose CPU time left out the trainer's workers: the run_end
// the supervisor writes carries the CPU time of the command's process
// tree (here all of it in a child the command waits for, as DataLoader
// workers are), the wall time and the load, which HostBusy reads.
func TestExternalUsage(t *testing.T) {
	_, s := newSession(t, "usage")
	script := `sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done'`
	ext := &External{Cmd: "sh -c ...", Argv: []string{"sh", "-c", script}}
	v := Resolved{Variant: Variant{Name: "ext", External: ext}}
	status, err := runExternal(context.Background(), s, "ext", v, io.Discard)
	if err != nil || status != profile.StatusOK {
		t.Fatalf("run: %s, %v", status, err)
	}
	js, _, err := s.ReadRun("ext")
	if err != nil {
		t.Fatal(err)
	}
	var end *profile.Event
	for i := range js {
		if js[i].T == profile.TypeRunEnd {
			end = &js[i]
		}
	}
	if end == nil || end.Usage == nil || end.Usage.CPUS <= 0 || end.Usage.WallS <= 0 {
		t.Fatalf("run_end usage %+v: want the tree's CPU time and the wall time", end)
	}
	if _, err := os.Stat("/proc/loadavg"); err == nil && end.Usage.Load <= 0 {
		t.Errorf("run_end usage without the load average: %+v", end.Usage)
	}
}
