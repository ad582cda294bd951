// Package trainflags holds the experiment flags that `gnnscope train` and
// `gnnscope run` share, and turns them into a training config and an
// experiment through runner.ConfigFromKeys, the function spec files go
// through too, so that a flag and a spec key mean the same thing.
package trainflags
