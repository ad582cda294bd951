package trainflags

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/train"
)

// featuresFlag is --features: a comma-separated list of at most one
// feature normalization (Config.Features) and at most one feature store
// (Config.FeatureStore), in any order ("row", "uva", "row,uva").
type featuresFlag struct {
	norm  *train.FeatureNorm
	store *device.Place
}

func (f featuresFlag) String() string {
	if f.norm == nil {
		return ""
	}
	if f.store != nil && *f.store != "" {
		return string(*f.norm) + "," + string(*f.store)
	}
	return string(*f.norm)
}

func (f featuresFlag) Set(v string) error {
	var norm train.FeatureNorm
	var store device.Place
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(strings.ToLower(p))
		switch {
		case slices.Contains(train.FeatureNorms(), train.FeatureNorm(p)):
			if norm != "" {
				return fmt.Errorf("%q and %q: give at most one normalization and one feature store", norm, p)
			}
			norm = train.FeatureNorm(p)
		case slices.Contains(device.Places(), device.Place(p)):
			if store != "" {
				return fmt.Errorf("%q and %q: give at most one normalization and one feature store", store, p)
			}
			store = device.Place(p)
		default:
			return fmt.Errorf("%q is neither a normalization (%s) nor a feature store (%s)", p,
				cmdutil.Choices(train.FeatureNorms(), ", ", nil), cmdutil.Choices(device.Places(), ", ", nil))
		}
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
