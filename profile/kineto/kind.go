package kineto

import (
	"strconv"
	"strings"
)

// Kinds of spans (attrs "kind").
const (
	KindCPU           = "cpu_op"
	KindAnnotation    = "annotation"
	KindRuntime       = "runtime"
	KindKernel        = "kernel"
	KindMemcpy        = "memcpy"
	KindMemset        = "memset"
	KindPython        = "python"
	KindGPUAnnotation = "gpu_annotation"
	KindSync          = "sync" // a device-side wait on an event or the context
	kindSkip          = ""
)

// kindOf classifies a complete event by its category (and, for traces
// that leave it out, its name).
func kindOf(ev *Raw) string {
	switch strings.ToLower(ev.Cat) {
	case "kernel":
		return KindKernel
	case "gpu_memcpy", "memcpy":
		return KindMemcpy
	case "gpu_memset", "memset":
		return KindMemset
	case "cuda_sync":
		return KindSync
	case "cuda_runtime", "cuda_driver", "runtime", "hip_runtime":
		return KindRuntime
	case "user_annotation":
		return KindAnnotation
	case "gpu_user_annotation":
		return KindGPUAnnotation
	case "python_function":
		return KindPython
	case "trace", "overhead":
		return kindSkip
	}
	if strings.HasPrefix(ev.Name, "ProfilerStep#") {
		return KindAnnotation
	}
	return KindCPU
}

// gpuKind reports whether a kind runs on a device's stream.
func gpuKind(k string) bool {
	return k == KindKernel || k == KindMemcpy || k == KindMemset
}

// laneOf returns the lane of an event of kind k.
func laneOf(ev *Raw, k string) string {
	switch k {
	case KindKernel, KindMemcpy, KindMemset, KindSync:
		return GPULane(device(ev), stream(ev))
	case KindGPUAnnotation:
		return "gpu" + strconv.FormatInt(device(ev), 10) + "/annot"
	case KindRuntime:
		return "runtime/" + thread(ev)
	case KindAnnotation:
		return "annot/" + thread(ev)
	case KindPython:
		return "py/" + thread(ev)
	}
	return "cpu/" + thread(ev)
}

// GPULane is the lane of device d's stream s: "gpu<d>/s<s>".
func GPULane(d, s int64) string {
	return "gpu" + strconv.FormatInt(d, 10) + "/s" + strconv.FormatInt(s, 10)
}

// device is a GPU event's device: args.device, else its pid.
func device(ev *Raw) int64 {
	if ev.Args.HasDevice {
		return ev.Args.Device
	}
	v, _ := parseInt(ev.Pid)
	return v
}

// stream is a GPU event's stream: args.stream, else its tid.
func stream(ev *Raw) int64 {
	if ev.Args.HasStream {
		return ev.Args.Stream
	}
	v, _ := parseInt(ev.Tid)
	return v
}

// thread names a host thread in a lane: its tid, made safe and short.
func thread(ev *Raw) string {
	t := ev.Tid
	if t == "" {
		t = ev.Pid
	}
	if t == "" {
		return "0"
	}
	if len(t) > 32 {
		t = t[:32]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x21 || r == 0x7f {
			return '_'
		}
		return r
	}, t)
}
