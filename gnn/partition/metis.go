package partition

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/gnnscope/gnnscope/gnn/graph"
)

// WriteMETIS writes g in the METIS .graph format that gpmetis reads: a
// header "n m" (m undirected edges), then one line per vertex listing its
// neighbors, 1-based. The graph is symmetrized first, as KWay sees it.
func WriteMETIS(w io.Writer, g *graph.CSR) error {
	wg, err := fromCSR(g)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	fmt.Fprintf(bw, "%d %d\n", wg.n, len(wg.adjncy)/2)
	var buf []byte
	for v := 0; v < wg.n; v++ {
		buf = buf[:0]
		for j := wg.xadj[v]; j < wg.xadj[v+1]; j++ {
			if j > wg.xadj[v] {
				buf = append(buf, ' ')
			}
			buf = strconv.AppendInt(buf, int64(wg.adjncy[j])+1, 10)
		}
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return fmt.Errorf("partition: write METIS graph: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("partition: write METIS graph: %w", err)
	}
	return nil
}

// WriteParts writes one part id per line, node by node: the .part format
// gpmetis writes.
func WriteParts(w io.Writer, parts []int32) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var buf []byte
	for _, p := range parts {
		buf = strconv.AppendInt(buf[:0], int64(p), 10)
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return fmt.Errorf("partition: write parts: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("partition: write parts: %w", err)
	}
	return nil
}
