package bench

import (
	"fmt"
	"strconv"
	"strings"
)

// defaultGemmShapes are the products of GNN layers that `gnnscope bench`
// measures: forward X·W with 100k rows at the hidden, Reddit-like input,
// small input and narrow output widths, the backward products of the
// 256-wide layer and of the 602-wide input, and a mini-batch layer.
const defaultGemmShapes = "100000x256x256,256x100000x256:tA,100000x256x256:tB," +
	"100000x602x256,602x100000x256:tA,100000x100x256,100000x256x64,1024x100x256"

// gemmShape is C = op(A)·op(B) with op(A) m×k and op(B) k×n.
type gemmShape struct {
	ta, tb  bool
	m, k, n int
}

// parseGemmShapes parses a comma-separated list of MxKxN, each optionally
// followed by ":tA" (op(A) = Aᵀ, a weight gradient) or ":tB" (op(B) = Bᵀ,
// an input gradient).
func parseGemmShapes(s string) ([]gemmShape, error) {
	var out []gemmShape
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		dims, flag, _ := strings.Cut(item, ":")
		var sh gemmShape
		switch flag {
		case "":
		case "tA":
			sh.ta = true
		case "tB":
			sh.tb = true
		default:
			return nil, fmt.Errorf("%q: the suffix must be :tA or :tB", item)
		}
		parts := strings.Split(dims, "x")
		if len(parts) != 3 {
			return nil, fmt.Errorf("%q is not MxKxN", item)
		}
		var v [3]int
		for i, p := range parts {
			x, err := strconv.Atoi(p)
			if err != nil || x < 1 || x > 1<<24 {
				return nil, fmt.Errorf("%q: %q is not a dimension from 1 to %d", item, p, 1<<24)
			}
			v[i] = x
		}
		sh.m, sh.k, sh.n = v[0], v[1], v[2]
		if int64(sh.m)*int64(sh.k)+int64(sh.k)*int64(sh.n)+int64(sh.m)*int64(sh.n) > 1<<31 {
			return nil, fmt.Errorf("%q: operands over 8 GiB", item)
		}
		out = append(out, sh)
	}
	return out, nil
}
