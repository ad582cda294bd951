"""A fake torch.cuda: a device clock the test advances, events that
complete when the test says the device got there, allocator counters."""

import struct


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


class OutOfMemoryError(RuntimeError):
    pass


class Props:
    total_memory = 80 << 30


class FakeCuda:
    OutOfMemoryError = OutOfMemoryError

    def __init__(self):
        self.device_ns = 5_000_000_000  # the device clock (arbitrary origin)
        self.done_ns = self.device_ns   # the device has executed work up to here
        self.syncs = 0
        self.peak = 0
        self.live = 0
        self.resets = 0
        fake = self

        class Event:
            def __init__(self, enable_timing=False):
                self.t = None

            def record(self, stream=None):
                self.t = fake.device_ns

            def query(self):
                return self.t is not None and fake.done_ns >= self.t

            def synchronize(self):
                fake.done_ns = max(fake.done_ns, self.t)

            def elapsed_time(self, other):
                assert self.query() and other.query(), "elapsed_time on a pending event"
                return f32((other.t - self.t) / 1e6)

        self.Event = Event

    def is_initialized(self):
        return True

    def synchronize(self):
        self.syncs += 1
        self.done_ns = self.device_ns

    def current_device(self):
        return 0

    def get_device_properties(self, dev):
        return Props()

    def get_device_name(self, dev):
        return "Fake GPU"

    def max_memory_allocated(self, dev=None):
        return self.peak

    def memory_allocated(self, dev=None):
        return self.live

    def reset_peak_memory_stats(self, dev=None):
        self.resets += 1
        self.peak = self.live


class FakeTensor:
    """A one-element CUDA tensor whose host copy is ready when the device
    reaches the copy."""

    is_cuda = True

    def __init__(self, value, cuda):
        self.value = value
        self.cuda = cuda
        self.items = 0

    def numel(self):
        return 1

    def detach(self):
        return self

    def to(self, device, non_blocking=False):
        assert device == "cpu" and non_blocking
        return HostTensor(self.value)

    def item(self):
        raise AssertionError("item() on a CUDA tensor forces a synchronization")


class HostTensor:
    def __init__(self, value):
        self.value = value

    def item(self):
        return self.value


class FakeNvml:
    class Mem:
        used = 3 << 30
        total = 80 << 30

    class Util:
        gpu = 42

    def __init__(self):
        self.inits = 0
        self.index = None

    def nvmlInit(self):
        self.inits += 1

    def nvmlDeviceGetHandleByIndex(self, i):
        self.index = i
        return ("h", i)

    def nvmlDeviceGetName(self, h):
        return b"Fake GPU"

    def nvmlSystemGetDriverVersion(self):
        return "550.1"

    def nvmlDeviceGetMemoryInfo(self, h):
        return self.Mem()

    def nvmlDeviceGetUtilizationRates(self, h):
        return self.Util()
