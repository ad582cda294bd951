// Package cudrv is the part of the CUDA driver API that gnnscope's CUDA
// backend uses, loaded at run time: the first call to Init opens
// libcuda.so.1 with dlopen, looks up every entry point and initializes the
// driver. Nothing is linked against libcuda, so a binary built with the
// cuda tag starts, prints its help and trains on the CPU on a machine
// without a GPU or a driver; there, Init returns an error that wraps
// ErrNoDriver and says what was missing.
//
// The entry points are looked up under the names cuda.h binds them to (the
// versioned symbols such as cuMemAlloc_v2), with cuda.h's own prototypes,
// so the compiler checks every call's signature against the header.
//
// Every call returns an error value that names the driver call and the
// driver's error name (*Error); none panics. Calls made before a
// successful Init return an *Error with code CUDA_ERROR_NOT_INITIALIZED.
//
// The library handle is process-wide state by nature (the driver is one per
// process); it is set once, under a sync.Once, by Init.
package cudrv
