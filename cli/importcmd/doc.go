// Package importcmd holds `gnnscope import`: traces of other profilers
// turned into sessions (`import trace`: torch.profiler's Chrome JSON).
package importcmd
