package profile

import (
	"strings"
	"testing"
)

func TestCPUModelKeys(t *testing.T) {
	for _, tc := range []struct{ name, listing, want string }{
		{"x86", "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel\t\t: 85\nmodel name\t: Intel(R) Xeon(R) Gold 6130\n", "Intel(R) Xeon(R) Gold 6130"},
		{"arm", "processor\t: 0\nBogoMIPS\t: 108.00\n\nHardware\t: BCM2835\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n", "Raspberry Pi 4 Model B Rev 1.4"},
		{"mips", "system type\t\t: MT7621\ncpu model\t\t: MIPS 1004Kc V2.15\n", "MIPS 1004Kc V2.15"},
		{"none", "processor\t: 0\nflags\t: fpu vme\n", ""},
	} {
		if got := cpuModel(strings.NewReader(tc.listing)); got != tc.want {
			t.Errorf("%s: cpuModel = %q, want %q", tc.name, got, tc.want)
		}
	}
}
