//go:build !cuda

package backend

import (
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/device"
)

const cudaBuilt = false

func openCUDA(ordinal int, _ Options) (device.Device, func() error, error) {
	return nil, nil, fmt.Errorf("device cuda:%d: %w", ordinal, ErrNoCUDA)
}
