package trainflags

import (
	"fmt"
	"slices"
	"strings"
)

// Values of --features: a normalization, a feature store, or both.
var (
	featureNorms  = []string{"auto", "row", "none"}
	featureStores = []string{"device", "uva", "host"}
)

// featuresFlag is --features: a comma-separated list of at most one
// feature normalization (Config.Features) and at most one feature store
// (Config.FeatureStore), in any order ("row", "uva", "row,uva").
type featuresFlag struct {
	norm, store *string
}

func (f featuresFlag) String() string {
	if f.norm == nil {
		return ""
	}
	if f.store != nil && *f.store != "" {
		return *f.norm + "," + *f.store
	}
	return *f.norm
}

func (f featuresFlag) Set(v string) error {
	norm, store := "", ""
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(strings.ToLower(p))
		var dst *string
		switch {
		case slices.Contains(featureNorms, p):
			dst = &norm
		case slices.Contains(featureStores, p):
			dst = &store
		default:
			return fmt.Errorf("%q is neither a normalization (%s) nor a feature store (%s)", p,
				strings.Join(featureNorms, ", "), strings.Join(featureStores, ", "))
		}
		if *dst != "" {
			return fmt.Errorf("%q and %q: give at most one normalization and one feature store", *dst, p)
		}
		*dst = p
	}
	if norm != "" {
		*f.norm = norm
	}
	if store != "" {
		*f.store = store
	}
	return nil
}

func (f featuresFlag) Type() string { return "list" }

// featuresHelp is --features' help.
const featuresHelp = "feature normalization and GPU feature store, comma-separated, such as row,uva"
