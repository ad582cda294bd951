// Package rng provides a small, fast, deterministic pseudo-random generator.
// Every random decision of the engine draws from an rng.Rand seeded from the
// user's seed and the coordinates of the work (epoch, batch, node), so results
// do not depend on scheduling or on the number of workers.
package rng
