//go:build cuda

package backend

import (
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/device/cuda"
)

const cudaBuilt = true

func openCUDA(ordinal int, opt Options) (device.Device, func() error, error) {
	d, err := cuda.Open(ordinal, cuda.Options{Budget: opt.Budget, AsyncTransfer: opt.AsyncTransfer, HostThreads: opt.Threads, Gemm: opt.Gemm})
	if err != nil {
		return nil, nil, err
	}
	return d, d.Close, nil
}
