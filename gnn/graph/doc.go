// Package graph holds the engine's graph structures: CSR adjacency with 64-bit
// row pointers and 32-bit column indices, the operations training needs on it
// (symmetrize, self-loops, degrees, permutation, induced subgraphs), and
// Block, the per-layer bipartite graph that samplers emit and layers consume.
//
// Convention: row v of a CSR lists the nodes v receives messages from. For the
// symmetric graphs used in training, that is simply v's neighbors.
package graph
