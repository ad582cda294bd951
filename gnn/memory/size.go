package memory

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/gnnscope/gnnscope/profile/units"
)

// Size is a byte count. It decodes from a JSON number of bytes or a string
// that units.ParseSize accepts, and encodes as a number.
type Size int64

// UnmarshalJSON accepts a number of bytes or a size string.
func (z *Size) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		n, err := units.ParseSize(s)
		if err != nil {
			return err
		}
		*z = Size(n)
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("size: want a number of bytes or a string such as \"512MiB\", got %s", b)
	}
	if f < 0 || f >= math.MaxInt64 || f != math.Trunc(f) {
		return fmt.Errorf("size: %s is not a whole non-negative number of bytes", b)
	}
	*z = Size(f)
	return nil
}

// String formats the size with units.FormatSize.
func (z Size) String() string { return units.FormatSize(int64(z)) }
