// Package tensor defines the engine's float32 row-major matrix. A Tensor is
// owned by the device that allocated it: on the CPU its storage is Data; an
// accelerator backend keeps its own handle and leaves Data nil.
package tensor
