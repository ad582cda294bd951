// Package chisq tests the neighbor samplers' draws for uniformity: a
// chi-square test of how often each neighbor of a node was drawn, at a
// fixed significance, for tests with fixed seeds (so they cannot flake).
package chisq
