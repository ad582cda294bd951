// Package planetoid loads the citation graphs of Planetoid (Cora, CiteSeer,
// PubMed; Yang et al., 2016) from the files PyG's Planetoid dataset and
// Kipf & Welling's GCN code read: ind.NAME.{x,tx,allx,y,ty,ally,graph} (Python
// pickles of SciPy sparse matrices, NumPy arrays and a dict of adjacency
// lists) and ind.NAME.test.index. It carries the public split that
// published results on these graphs use: for training the first nodes of
// the file order, those ind.NAME.y labels (20 per class in the published
// files), the next 500 for validation, and the 1,000 test nodes the files
// name. Pickles are read by a pickle machine
// (gopickle), never executed: only the few NumPy and SciPy classes these
// files hold are understood, and anything else is an error.
package planetoid
