//go:build cuda

package cuda

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gnnscope/gnnscope/gnn/device/cuda/cublas"
	"github.com/gnnscope/gnnscope/gnn/device/cuda/cudrv"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/graph"
)

var (
	_ device.Device     = (*Device)(nil)
	_ device.Async      = (*Device)(nil)
	_ device.PinnedHost = (*Device)(nil)
	_ device.Describer  = (*Device)(nil)
	_ device.Bookkeeper = (*Device)(nil)
)

// Options configure Open.
type Options struct {
	// Budget caps the bytes of live tensors (0 = unlimited, i.e. the GPU's
	// memory is the limit): past it Alloc returns a *device.OOMError.
	Budget int64
	// AsyncTransfer queues host-to-device copies of GatherHost and
	// CopyFromHost on the copy stream and returns at once; compute waits for
	// them with events. Off, every such copy runs on the compute stream and
	// the call waits for it (no overlap).
	AsyncTransfer bool
	// BlockCacheBytes bounds the device copies of graph blocks kept for
	// reuse (0 = the smaller of 1 GiB and an eighth of the GPU's memory).
	BlockCacheBytes int64
	// HostThreads is the number of goroutines that gather host rows into
	// staging buffers (0 = GOMAXPROCS).
	HostThreads int
	// Gemm picks the matrix product: "" or "auto" (cuBLAS where it can be
	// loaded, else the own kernel), "cublas" (Open fails without it) or
	// "own". Info().Gemm names the one used.
	Gemm device.Gemm
	// CublasPaths are tried before the usual places (see package cublas).
	CublasPaths []string
}

// Device is the CUDA backend on one GPU. Its methods are safe for
// concurrent use; kernels run in call order on one compute stream.
type Device struct {
	ordinal int
	name    string
	cdev    cudrv.Device
	ctx     cudrv.Context
	info    device.Info
	sms     int

	maxBlocks int
	threads   int
	async     bool

	mem   *device.Allocator
	pool  *cachingPool
	stage *stagingPool

	compute, copyS, history, timing cudrv.Stream
	blas                            *cublas.Handle // nil: the own GEMM kernel
	mods                            []cudrv.Module
	fns                             map[string]cudrv.Function
	params                          map[string][]string // PTX parameter types per kernel

	evMu       sync.Mutex
	syncEvents []*evt // idle events without timing
	timeEvents []*evt // idle events with timing

	blkMu   sync.Mutex
	blocks  *lru[*graph.Block, *devBlock]
	evicted []*devBlock // evicted while blkMu is held, freed after the launch

	pinMu  sync.RWMutex
	pinned []pinnedRange // sorted by start

	scratchMu               sync.Mutex
	scratchLive, scratchMax int64

	clock    *eventClock
	spanMu   sync.Mutex
	marks    map[uint64]markRec
	nextMark uint64
	spans    []pendingSpan
	stop     chan struct{}
	polled   chan struct{}

	closed atomic.Bool
	fault  atomic.Pointer[error] // the first driver error (see must)
}

// pinnedRange is a block of mapped page-locked host memory.
type pinnedRange struct {
	start, end uintptr // host addresses
	devptr     uintptr // the device address of start
}

// Open starts a device on GPU ordinal (its primary context), loads the
// kernels and creates the streams.
func Open(ordinal int, opt Options) (d *Device, err error) {
	if err := cudrv.Init(); err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	n, err := cudrv.DeviceCount()
	if err != nil {
		return nil, fmt.Errorf("cuda: counting devices: %w", err)
	}
	if ordinal < 0 || ordinal >= n {
		return nil, fmt.Errorf("cuda: no device %d (this machine has %d)", ordinal, n)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cdev, err := cudrv.GetDevice(ordinal)
	if err != nil {
		return nil, fmt.Errorf("cuda: device %d: %w", ordinal, err)
	}
	ctx, err := cdev.RetainPrimaryCtx()
	if err != nil {
		return nil, fmt.Errorf("cuda: device %d: primary context: %w", ordinal, err)
	}
	if err := ctx.SetCurrent(); err != nil {
		cdev.ReleasePrimaryCtx()
		return nil, fmt.Errorf("cuda: device %d: making the context current: %w", ordinal, err)
	}
	d = &Device{ordinal: ordinal, name: fmt.Sprintf("cuda:%d", ordinal), cdev: cdev, ctx: ctx,
		async: opt.AsyncTransfer, threads: opt.HostThreads, fns: map[string]cudrv.Function{}, params: map[string][]string{}, marks: map[uint64]markRec{}}
	defer func() {
		if err != nil {
			d.release()
		}
	}()
	if d.threads <= 0 {
		d.threads = runtime.GOMAXPROCS(0)
	}
	if err := d.describe(); err != nil {
		return nil, err
	}
	d.maxBlocks = max(d.sms, 1) * 32
	d.mem = device.NewAllocator(opt.Budget)
	drv := driver{d}
	d.pool = newCachingPool(drv)
	d.stage = newStagingPool(drv)
	limit := opt.BlockCacheBytes
	if limit <= 0 {
		limit = min(1<<30, d.info.Memory/8)
	}
	d.blocks = newLRU(limit, func(_ *graph.Block, b *devBlock) { d.evicted = append(d.evicted, b) })
	for _, s := range []*cudrv.Stream{&d.compute, &d.copyS, &d.history, &d.timing} {
		if *s, err = cudrv.NewStream(); err != nil {
			return nil, fmt.Errorf("cuda: %s: creating a stream: %w", d.name, err)
		}
	}
	if err := d.load(); err != nil {
		return nil, err
	}
	if err := d.openBLAS(opt); err != nil {
		return nil, err
	}
	start := time.Now()
	d.clock = newEventClock(drv, func() int64 { return int64(time.Since(start)) }, int64(5*time.Second))
	if err := d.clock.renew(); err != nil {
		return nil, fmt.Errorf("cuda: %s: clock anchor: %w", d.name, err)
	}
	d.stop, d.polled = make(chan struct{}), make(chan struct{})
	go d.poll()
	return d, nil
}

// describe fills info and the multiprocessor count.
func (d *Device) describe() error {
	name, err := d.cdev.Name()
	if err != nil {
		return fmt.Errorf("cuda: %s: name: %w", d.name, err)
	}
	total, err := d.cdev.TotalMem()
	if err != nil {
		return fmt.Errorf("cuda: %s: memory: %w", d.name, err)
	}
	if d.sms, err = d.cdev.Attribute(cudrv.MultiprocessorCount); err != nil {
		return fmt.Errorf("cuda: %s: multiprocessors: %w", d.name, err)
	}
	major, _ := d.cdev.Attribute(cudrv.ComputeCapabilityMajor)
	minor, _ := d.cdev.Attribute(cudrv.ComputeCapabilityMinor)
	d.info = device.Info{Backend: device.KindCUDA, Name: name, Memory: total, Compute: fmt.Sprintf("%d.%d", major, minor)}
	if v := cudrv.DriverVersion(); v > 0 {
		d.info.Driver = fmt.Sprintf("CUDA %d.%d", v/1000, (v%1000)/10)
	}
	if u, err := d.cdev.UUID(); err == nil {
		d.info.UUID = "GPU-" + u
	}
	return nil
}

// load JIT-compiles the embedded PTX and looks up every kernel.
func (d *Device) load() error {
	mods, err := Modules()
	if err != nil {
		return err
	}
	for _, m := range mods {
		mod, err := cudrv.LoadModule(m.PTX)
		if err != nil {
			return fmt.Errorf("cuda: %s: loading kernels/%s.ptx: %w", d.name, m.Name, err)
		}
		d.mods = append(d.mods, mod)
		for _, name := range kernelNames[m.Name] {
			d.params[name] = m.Params[name]
			fn, err := mod.Function(name)
			if err != nil {
				return fmt.Errorf("cuda: %s: kernel %s: %w", d.name, name, err)
			}
			d.fns[name] = fn
		}
	}
	return nil
}

// Close waits for queued work, reports pending spans and releases the
// device's memory, streams and context. Tensors still allocated become
// invalid. Close is idempotent.
func (d *Device) Close() error {
	if !d.closed.CompareAndSwap(false, true) {
		return nil
	}
	close(d.stop)
	<-d.polled
	d.enter()
	defer d.leave()
	err := d.syncStreams()
	if f := d.Err(); f != nil {
		err = f // the first driver error explains what follows it
	}
	d.drainSpans(true)
	d.blkMu.Lock()
	d.blocks.clear()
	d.freeEvicted()
	d.blkMu.Unlock()
	if perr := d.pool.emptyCache(); err == nil {
		err = perr
	}
	if serr := d.stage.release(); err == nil {
		err = serr
	}
	d.clock.close()
	d.release()
	return err
}

// release destroys what Open created (the context must be current).
func (d *Device) release() {
	d.evMu.Lock()
	for _, e := range append(d.syncEvents, d.timeEvents...) {
		e.e.Destroy()
	}
	d.syncEvents, d.timeEvents = nil, nil
	d.evMu.Unlock()
	for _, m := range d.mods {
		m.Unload()
	}
	d.mods = nil
	if d.blas != nil {
		d.blas.Close()
		d.blas = nil
	}
	for _, s := range []*cudrv.Stream{&d.compute, &d.copyS, &d.history, &d.timing} {
		if *s != (cudrv.Stream{}) {
			s.Destroy()
		}
	}
	d.cdev.ReleasePrimaryCtx()
}

// Name returns "cuda:N".
func (d *Device) Name() string { return d.name }

// Info describes the GPU.
func (d *Device) Info() device.Info { return d.info }

// Mem returns the allocator that accounts the bytes of live tensors.
func (d *Device) Mem() *device.Allocator { return d.mem }

// AsyncTransfer reports whether host-to-device copies are asynchronous.
func (d *Device) AsyncTransfer() bool { return d.async }

// Stats describes the device's memory beyond the live tensors.
type Stats struct {
	Pool         PoolStats // the caching allocator's driver memory
	ScratchBytes int64     // internal scratch in use (index uploads, partial sums)
	ScratchPeak  int64     // its highest value
	BlockCache   int64     // device copies of graph blocks
	BlockEntries int
	PinnedBytes  int64 // page-locked staging buffers
	StagingWaits int64 // staging requests that waited for a copy
}

// Stats returns a snapshot of the device's internal memory.
func (d *Device) Stats() Stats {
	s := Stats{Pool: d.pool.stats(), PinnedBytes: d.stage.pinnedBytes()}
	d.scratchMu.Lock()
	s.ScratchBytes, s.ScratchPeak = d.scratchLive, d.scratchMax
	d.scratchMu.Unlock()
	d.blkMu.Lock()
	s.BlockEntries, s.BlockCache = d.blocks.size()
	d.blkMu.Unlock()
	d.stage.mu.Lock()
	s.StagingWaits = d.stage.waits
	d.stage.mu.Unlock()
	return s
}

// MemInfo returns the GPU's free and total memory as the driver reports it
// (cuMemGetInfo): every process's allocations, this one's cache included.
func (d *Device) MemInfo() (free, total int64, err error) {
	d.enter()
	defer d.leave()
	return cudrv.MemInfo()
}

// enter binds the calling goroutine to its thread and makes the device's
// context current there; every method that calls the driver runs between
// enter and leave.
func (d *Device) enter() {
	runtime.LockOSThread()
	d.must("making the context current", d.ctx.SetCurrent())
}

func (d *Device) leave() { runtime.UnlockOSThread() }

// must records a driver error as the device's fault and reports whether
// err was nil. Most device.Device methods have no error result, so a
// driver error is sticky, as the driver's own are: once the device has a
// fault it queues no more kernels or copies, Alloc returns the fault, and
// so does Close (see Err).
func (d *Device) must(what string, err error) bool {
	if err == nil {
		return true
	}
	f := fmt.Errorf("cuda: %s: %s: %w", d.name, what, err)
	d.fault.CompareAndSwap(nil, &f)
	return false
}

// Err returns the first driver error the device met, or nil.
func (d *Device) Err() error {
	if f := d.fault.Load(); f != nil {
		return *f
	}
	return nil
}

// faulted reports whether the device met a driver error.
func (d *Device) faulted() bool { return d.fault.Load() != nil }

// launch queues a kernel of blockThreads threads per block (nothing once
// the device is faulted).
func (d *Device) launch(name string, gx, gy, gz int, s cudrv.Stream, a *kargs) {
	if d.faulted() {
		return
	}
	fn, ok := d.fns[name]
	if !ok {
		panic("cuda: unknown kernel " + name)
	}
	if err := a.check(name, d.params[name]); err != nil {
		panic(err.Error())
	}
	d.must("launching "+name, fn.Launch(gx, gy, gz, blockThreads, 1, 1, 0, s, a.values()))
}

// pinnedAt returns the mapped pinned range holding [p, p+n) bytes.
func (d *Device) pinnedAt(p unsafe.Pointer, n int64) (pinnedRange, bool) {
	a := uintptr(p)
	d.pinMu.RLock()
	defer d.pinMu.RUnlock()
	i := sort.Search(len(d.pinned), func(i int) bool { return d.pinned[i].end > a })
	if i < len(d.pinned) && d.pinned[i].start <= a && a+uintptr(n) <= d.pinned[i].end {
		return d.pinned[i], true
	}
	return pinnedRange{}, false
}

// ReservedBytes returns the bytes the caching allocator holds from the
// driver (tensors, cache and scratch, rounded).
func (d *Device) ReservedBytes() int64 { return d.pool.stats().Reserved }

// openBLAS loads cuBLAS for Gemm as opt.Gemm asks, on the compute stream,
// and records the choice in Info().Gemm.
func (d *Device) openBLAS(opt Options) error {
	switch opt.Gemm {
	case device.GemmOwn:
		d.info.Gemm = "own kernel (as asked)"
		return nil
	case "", device.GemmAuto, device.GemmCUBLAS:
	default:
		return fmt.Errorf("cuda: gemm %q: want auto, cublas or own", opt.Gemm)
	}
	lib, err := cublas.Find(opt.CublasPaths...)
	if err == nil {
		d.blas, err = cublas.New(d.compute.Handle())
	}
	if err != nil {
		if opt.Gemm == device.GemmCUBLAS {
			return fmt.Errorf("cuda: %s: %w", d.name, err)
		}
		d.info.Gemm = "own kernel (" + firstClause(err.Error()) + ")"
		return nil
	}
	v := d.blas.Version()
	d.info.Gemm = fmt.Sprintf("cuBLAS %d.%d.%d (%s)", v/10000, v/100%100, v%100, lib)
	return nil
}

// firstClause shortens a long search error to its first clause.
func firstClause(s string) string {
	if i := strings.Index(s, " (tried"); i > 0 {
		return s[:i]
	}
	return s
}

// Books returns the device's account of the memory it holds beyond the
// live tensors (see device.Books).
func (d *Device) Books() device.Books {
	s := d.Stats()
	return device.Books{Reserved: s.Pool.Reserved, Allocated: s.Pool.Allocated, Cached: s.Pool.Cached, Pending: s.Pool.Pending,
		Scratch: s.ScratchBytes, BlockCache: s.BlockCache, PinnedHost: s.PinnedBytes}
}

// EmptyCache waits for the device, drops the block cache's device copies
// and returns every free cached segment to the driver.
func (d *Device) EmptyCache() error {
	d.enter()
	defer d.leave()
	if err := d.syncStreams(); err != nil {
		return fmt.Errorf("cuda: %s: empty cache: %w", d.name, err)
	}
	d.blkMu.Lock()
	d.blocks.clear()
	d.freeEvicted()
	d.blkMu.Unlock()
	return d.pool.emptyCache()
}
