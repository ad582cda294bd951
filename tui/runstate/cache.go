package runstate

// Cache holds a view's last drawing and the key it was drawn under: what
// the drawing depends on (a run, counts of the events the view draws,
// the size, a zoom level...). Views keyed on the events they draw are
// not redrawn by other events; ViewCache keys on any change of a run.
type Cache[K comparable] struct {
	key K
	out string
	ok  bool
}

// View returns the drawing under key k: the cached one when k is the key
// it was drawn under, else the result of draw, which it keeps.
func (c *Cache[K]) View(k K, draw func() string) string {
	if c.ok && c.key == k {
		return c.out
	}
	c.out, c.key, c.ok = draw(), k, true
	return c.out
}

// ViewCache holds a view's last drawing of a run. The drawing stays valid
// while the run (its Version), the size and the view's own key (a zoom
// level, say; 0 if the view has none) are those it was drawn with, so a
// view asked to draw many times a second redraws only after a change.
type ViewCache struct {
	c Cache[versionKey]
}

// versionKey is what a ViewCache's drawing depends on.
type versionKey struct {
	run  *Run
	ver  uint64
	w, h int
	key  int
}

// View returns the drawing of r at w×h with key: the cached one when none
// of them changed, else the result of draw, which it keeps. A nil run or
// an empty area draws nothing.
func (c *ViewCache) View(r *Run, w, h, key int, draw func() string) string {
	if r == nil || w <= 0 || h <= 0 {
		return ""
	}
	return c.c.View(versionKey{r, r.Version(), w, h, key}, draw)
}
