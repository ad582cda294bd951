package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/sessions"
)

// FuzzLaunchFile feeds arbitrary bytes to the reader of a session's
// launch.json (readLaunchFile, which imports and every command that looks
// at a run use): it must never panic, refuse what is not JSON of the
// right shape with an error naming launch.json, and accept only run and
// variant names that are safe file names.
func FuzzLaunchFile(f *testing.F) {
	f.Add([]byte(`{"mode":"sequential","runs":["baseline","optimized"]}`))
	f.Add([]byte(`{"mode":"parallel","runs":["a.r1","a.r2"],"variants":{"a.r1":"a","a.r2":"a"},"launcher":{"pid":12,"host":"h"},"started":"2026-11-22T15:30:45Z"}`))
	f.Add([]byte(`{"runs":["../../../../tmp/x"]}`))
	f.Add([]byte(`{"runs":["a"],"variants":{"a":"..\\b"}}`))
	f.Add([]byte(`{"runs":["x.rank1"],"variants":{"b":""}}`))
	f.Add([]byte(`{"runs":[1,null],"launcher":[],"started":"yesterday"}`))
	f.Add([]byte(`[] {} "runs"`))
	f.Add([]byte("\xff\xfe{\"runs\":[\"a\x00\"]}"))
	dir := f.TempDir() // the inputs run one at a time in each process
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, launchFile), data, 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := readLaunchFile(dir)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), launchFile) {
				t.Fatalf("error %q does not name %s", err, launchFile)
			}
			if CheckImport(dir) == nil {
				t.Fatalf("import accepts a launch.json that readLaunchFile refuses: %v", err)
			}
			return
		}
		for _, run := range st.Runs {
			if sessions.ValidName(run) != nil {
				t.Fatalf("run %q accepted", run)
			}
		}
		for run, v := range st.Variants {
			if sessions.ValidName(run) != nil || sessions.ValidName(v) != nil {
				t.Fatalf("variant %q -> %q accepted", run, v)
			}
		}
		if err := CheckImport(dir); err != nil {
			t.Fatalf("import refuses a launch.json that readLaunchFile accepts: %v", err)
		}
	})
}
