package bench

import (
	"encoding/json"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/internal/flagtest"
	"github.com/gnnscope/gnnscope/cli/iostreams"
)

func TestNewCmdCacheFlags(t *testing.T) {
	opts, err := flagtest.Parse(t, NewCmdCache, "--data", "synth-small", "--fanout", "15,10,5", "--batch-size", "1024",
		"--seed", "7", "--data-seed", "3", "--sizes", "40, 5%,10,5", "--workers", "3", "--json", "-q", "--no-cache", "--cache-dir", "c")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Data != "synth-small" || opts.Batch != 1024 || opts.Seed != 7 || opts.DataSeed != 3 || opts.Workers != 3 ||
		!opts.JSON || !opts.Quiet || !opts.NoCache || opts.CacheDir != "c" {
		t.Errorf("options %+v", opts)
	}
	p, err := opts.parse()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.fanouts, []int{15, 10, 5}) || !slices.Equal(p.percents, []float64{5, 10, 40}) || p.workers != 3 {
		t.Errorf("plan %+v", p)
	}
	// The defaults are GraphSAGE's training defaults on synth-products.
	opts, err = flagtest.Parse(t, NewCmdCache)
	if err != nil || opts.Data != "synth-products" || opts.Fanout != "25,10" || opts.Batch != 512 || opts.Seed != 0 ||
		opts.Sizes != "5,10,20,40" || opts.Workers != 0 || opts.JSON {
		t.Errorf("defaults %+v, %v", opts, err)
	}
	if p, err := opts.parse(); err != nil || p.workers < 1 || !slices.Equal(p.percents, []float64{5, 10, 20, 40}) {
		t.Errorf("default plan %+v, %v", p, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--data", ""}, "--data is required"},
		{[]string{"--fanout", "10,x"}, `--fanout: "x" is not an integer`},
		{[]string{"--fanout", "10,0"}, "--fanout: 0 is not a positive fanout"},
		{[]string{"--batch-size", "0"}, "--batch-size: 0 is not a positive batch size"},
		{[]string{"--workers", "-1"}, "--workers: -1"},
		{[]string{"--sizes", "5,0"}, `--sizes: "0" is not a percentage in (0, 100]`},
		{[]string{"--sizes", "101%"}, `--sizes: "101%" is not a percentage`},
		{[]string{"--sizes", "5,,10"}, `--sizes: "" is not a percentage`},
		{[]string{"--sizes", "NaN"}, `--sizes: "NaN" is not a percentage`},
	} {
		opts, err := flagtest.Parse(t, NewCmdCache, c.args...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := opts.parse(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
	if err := flagtest.Execute(NewCmdBench(flagtest.Factory(), nil), "cache", "--sizes", "0"); err == nil || !strings.Contains(err.Error(), "--sizes") {
		t.Errorf("bench cache is not a subcommand of bench: %v", err)
	}
}

// runCache runs `bench cache` on synth-tiny with args and returns stdout.
func runCache(t *testing.T, args ...string) string {
	t.Helper()
	ios, _, out, _ := iostreams.Test()
	cmd := NewCmdCache(&cmdutil.Factory{IOStreams: ios}, nil)
	if err := flagtest.Execute(cmd, append([]string{"--data", "synth-tiny", "--no-cache", "-q"}, args...)...); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// On synth-tiny: the oracle's cache is the best of each size, hit rates
// are shares that grow with the size, and the host-to-device bytes fall by
// exactly the hit fraction.
func TestCacheCurve(t *testing.T) {
	var r CacheReport
	if err := json.Unmarshal([]byte(runCache(t, "--sizes", "1,5,10,20,40,100", "--json")), &r); err != nil {
		t.Fatal(err)
	}
	if r.Data != "synth-tiny" || r.Nodes != 10000 || r.Features != 32 || r.Batches < 2 || len(r.Sizes) != 6 ||
		r.Accesses <= 0 || r.PreAccesses <= 0 || r.Touched <= 0 || r.Touched > r.Nodes {
		t.Fatalf("report %+v", r)
	}
	if r.BytesNoCache != r.Accesses*int64(r.Features)*4 {
		t.Errorf("bytes without a cache %d, want %d accesses × %d × 4", r.BytesNoCache, r.Accesses, r.Features)
	}
	names := [3]string{"degree", "frequency", "oracle"}
	var prev [3]CacheHit
	for i, s := range r.Sizes {
		if want := int(s.Percent / 100 * float64(r.Nodes)); s.Rows != want || s.Bytes != int64(want)*int64(r.Features)*4 {
			t.Errorf("%g%%: %d rows of %d bytes, want %d", s.Percent, s.Rows, s.Bytes, want)
		}
		hits := [3]CacheHit{s.Degree, s.Frequency, s.Oracle}
		for j, h := range hits {
			if !h.Exact || h.HitRate < 0 || h.HitRate > 1 || h.Hits+h.Misses != r.Accesses ||
				h.HitRate != float64(h.Hits)/float64(r.Accesses) {
				t.Errorf("%g%% %s: %+v of %d accesses", s.Percent, names[j], h, r.Accesses)
			}
			// bytes with / bytes without = 1 − hit rate, in integers:
			// bytes_h2d × accesses = bytes_no_cache × (accesses − hits).
			lhs := new(big.Int).Mul(big.NewInt(h.BytesH2D), big.NewInt(r.Accesses))
			rhs := new(big.Int).Mul(big.NewInt(r.BytesNoCache), big.NewInt(r.Accesses-h.Hits))
			if lhs.Cmp(rhs) != 0 {
				t.Errorf("%g%% %s: %d bytes of %d, hit rate %v", s.Percent, names[j], h.BytesH2D, r.BytesNoCache, h.HitRate)
			}
			if i > 0 && (h.Hits < prev[j].Hits || h.HitRate < prev[j].HitRate) {
				t.Errorf("%s: %g%% hits %d, fewer than %g%%'s %d", names[j], s.Percent, h.Hits, r.Sizes[i-1].Percent, prev[j].Hits)
			}
		}
		if s.Oracle.Hits < s.Degree.Hits || s.Oracle.Hits < s.Frequency.Hits || s.Oracle.HitRate < max(s.Degree.HitRate, s.Frequency.HitRate) {
			t.Errorf("%g%%: oracle %v below degree %v or frequency %v", s.Percent, s.Oracle.HitRate, s.Degree.HitRate, s.Frequency.HitRate)
		}
		prev = hits
	}
	// A cache of every row hits every access; a cache of 1% misses some.
	if all := r.Sizes[5]; all.Degree.HitRate != 1 || all.Frequency.HitRate != 1 || all.Oracle.HitRate != 1 || all.Oracle.BytesH2D != 0 {
		t.Errorf("100%%: %+v", all)
	}
	if r.Sizes[0].Oracle.HitRate >= 1 || r.Sizes[0].Degree.Misses == 0 {
		t.Errorf("1%%: %+v", r.Sizes[0])
	}
	// The oracle's cache holds the most-touched rows: it beats the
	// pre-sampling pass's guess somewhere on the curve.
	if !slices.ContainsFunc(r.Sizes[:5], func(s CacheSize) bool { return s.Oracle.Hits > s.Frequency.Hits }) {
		t.Error("the frequency policy equals the oracle at every size: the two epochs drew the same batches?")
	}

	// The batches depend on the seed, not on the number of workers.
	var one CacheReport
	if err := json.Unmarshal([]byte(runCache(t, "--sizes", "1,5,10,20,40,100", "--json", "--workers", "1")), &one); err != nil {
		t.Fatal(err)
	}
	one.Workers, one.Seconds, r.Workers, r.Seconds = 0, CacheSeconds{}, 0, CacheSeconds{}
	if !reflect.DeepEqual(one, r) {
		t.Errorf("1 worker:\n%+v\nothers:\n%+v", one, r)
	}
}

// The text output has a row per size with every check passed.
func TestCacheTable(t *testing.T) {
	out := runCache(t, "--sizes", "5,20")
	for _, want := range []string{"synth-tiny: 10000 nodes × 32 features", "epoch 1: ", "without a cache: ", "H2D oracle"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	var rows [][]string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && strings.HasSuffix(f[0], "%") {
			rows = append(rows, f)
		}
	}
	if len(rows) != 2 || rows[0][0] != "5%" || rows[0][1] != "500" || rows[1][0] != "20%" || rows[1][1] != "2000" ||
		rows[0][len(rows[0])-1] != "yes" || rows[1][len(rows[1])-1] != "yes" {
		t.Errorf("rows %q in\n%s", rows, out)
	}
}

// A report whose misses disagree with its hit rate is an error.
func TestCacheReportCheck(t *testing.T) {
	r := CacheReport{Accesses: 10, Sizes: []CacheSize{{Percent: 5, Degree: CacheHit{Exact: true}, Frequency: CacheHit{Exact: true}, Oracle: CacheHit{Exact: true}}}}
	if err := r.check(); err != nil {
		t.Fatal(err)
	}
	r.Sizes[0].Frequency = CacheHit{HitRate: 0.5, Hits: 5, Misses: 4}
	if err := r.check(); err == nil || !strings.Contains(err.Error(), "5% frequency cache: 5 hits and 4 misses of 10 accesses") {
		t.Errorf("error %v", err)
	}
}
