package runstate

// ViewCache holds a view's last drawing of a run. The drawing stays valid
// while the run (its Version), the size and the view's own key (a zoom
// level, say; 0 if the view has none) are those it was drawn with, so a
// view asked to draw many times a second redraws only after a change.
type ViewCache struct {
	run  *Run
	ver  uint64
	w, h int
	key  int
	out  string
}

// View returns the drawing of r at w×h with key: the cached one when none
// of them changed, else the result of draw, which it keeps. A nil run or
// an empty area draws nothing.
func (c *ViewCache) View(r *Run, w, h, key int, draw func() string) string {
	if r == nil || w <= 0 || h <= 0 {
		return ""
	}
	if r == c.run && r.Version() == c.ver && w == c.w && h == c.h && key == c.key {
		return c.out
	}
	c.out = draw()
	c.run, c.ver, c.w, c.h, c.key = r, r.Version(), w, h, key
	return c.out
}
