//go:build !(cgo && linux)

package nvml

// Lib is an initialized NVML; this build has none.
type Lib struct{}

// Open reports that NVML is not available: this build has no cgo (or is
// not for Linux), which go-nvml needs.
func Open() (*Lib, error) { return openPath("") }

func openPath(string) (*Lib, error) {
	return nil, notAvailable("this gnnscope was built without cgo for Linux")
}

// Close does nothing.
func (l *Lib) Close() error { return nil }

// DriverVersion is never reached without an open Lib.
func (l *Lib) DriverVersion() (string, error) { return "", notAvailable("no cgo") }

// Count is never reached without an open Lib.
func (l *Lib) Count() (int, error) { return 0, notAvailable("no cgo") }

// DeviceByIndex is never reached without an open Lib.
func (l *Lib) DeviceByIndex(int) (*Device, error) { return nil, notAvailable("no cgo") }

// DeviceByUUID is never reached without an open Lib.
func (l *Lib) DeviceByUUID(string) (*Device, error) { return nil, notAvailable("no cgo") }
