// Package clitest runs gnnscope's commands in tests: the whole command
// tree over test streams, and the test binary standing in for the gnnscope
// binary that `gnnscope run` starts in the background.
package clitest
