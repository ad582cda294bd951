// Package npz reads and writes NumPy .npz archives (zip files of .npy
// arrays) and loads graph datasets stored in the gnn-benchmark layout (Cora,
// CiteSeer, PubMed, Amazon, Coauthor; Shchur et al., "Pitfalls of Graph
// Neural Network Evaluation").
//
// The reader handles stored and deflated members, .npy format versions 1.0,
// 2.0 and 3.0, C-order arrays of booleans, integers, floats and fixed-width
// unicode strings, in either byte order. It validates every header and size
// before allocating, so a damaged or hostile file yields an error, never a
// panic or a huge allocation. Pickled (object) arrays are not supported; the
// members that hold them can simply be left unread.
//
// Write produces files that numpy.load reads, which is how graphs are
// exported for comparisons with PyG or DGL.
package npz
