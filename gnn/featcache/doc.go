// Package featcache is the device feature cache of torch-quiver: the
// hottest rows of the feature matrix stay resident in device memory under
// a byte budget, so that a batch gathers its hits there and moves only
// its misses from host memory.
//
// It holds the budget ("0.1G", "512MiB", "20%" of the matrix), the
// policies that rank rows (by degree, or by how often a pre-sampling pass
// touched them), the oracle ranking by an epoch's true access counts, and
// the cache itself: the resident rows and the map from node to slot that
// splits a batch's input into hits and misses.
package featcache
