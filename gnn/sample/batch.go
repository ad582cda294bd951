package sample

import "github.com/gnnscope/gnnscope/gnn/graph"

// Batch is one mini-batch: the blocks of every layer and the global ids of
// the nodes involved.
type Batch struct {
	Epoch, Index int
	// Nodes are the global ids of the outermost layer's sources. Layer l's
	// sources are the prefix Nodes[:Blocks[l].NumSrc] and its destinations
	// the prefix Nodes[:Blocks[l].NumDst]; the targets come first.
	Nodes []int32
	// Blocks run outermost (input) layer first; the last block's
	// destinations are the targets.
	Blocks []*graph.Block
}

// NumTargets returns the number of target (seed) nodes.
func (b *Batch) NumTargets() int { return b.Blocks[len(b.Blocks)-1].NumDst }

// Targets returns the global ids of the targets.
func (b *Batch) Targets() []int32 { return b.Nodes[:b.NumTargets()] }

// NumEdges returns the total number of edges over all blocks.
func (b *Batch) NumEdges() int64 {
	var e int64
	for _, blk := range b.Blocks {
		e += blk.NumEdges()
	}
	return e
}
