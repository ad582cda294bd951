package cuda

import "container/list"

// lru is a least-recently-used map bounded in bytes. It holds device copies
// of graph blocks (keyed by the block), so that a block used by a forward
// and a backward pass, or by every full-batch epoch, is uploaded once. It
// is not safe for concurrent use.
type lru[K comparable, V any] struct {
	limit int64
	bytes int64
	order *list.List // front = most recent; values *lruEntry[K, V]
	items map[K]*list.Element
	evict func(K, V) // called for every entry that leaves the cache
}

type lruEntry[K comparable, V any] struct {
	key   K
	val   V
	bytes int64
}

func newLRU[K comparable, V any](limit int64, evict func(K, V)) *lru[K, V] {
	return &lru[K, V]{limit: limit, order: list.New(), items: map[K]*list.Element{}, evict: evict}
}

// get returns the value of k and marks it most recent.
func (c *lru[K, V]) get(k K) (V, bool) {
	if e, ok := c.items[k]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*lruEntry[K, V]).val, true
	}
	var zero V
	return zero, false
}

// add inserts k (replacing an older value) and evicts the least recent
// entries until the cache is within its limit; the entry just added stays
// even when it alone exceeds the limit.
func (c *lru[K, V]) add(k K, v V, bytes int64) {
	c.remove(k)
	c.items[k] = c.order.PushFront(&lruEntry[K, V]{key: k, val: v, bytes: bytes})
	c.bytes += bytes
	for c.bytes > c.limit && c.order.Len() > 1 {
		c.removeElement(c.order.Back())
	}
}

// remove drops k if present.
func (c *lru[K, V]) remove(k K) {
	if e, ok := c.items[k]; ok {
		c.removeElement(e)
	}
}

func (c *lru[K, V]) removeElement(e *list.Element) {
	ent := e.Value.(*lruEntry[K, V])
	c.order.Remove(e)
	delete(c.items, ent.key)
	c.bytes -= ent.bytes
	if c.evict != nil {
		c.evict(ent.key, ent.val)
	}
}

// clear drops every entry.
func (c *lru[K, V]) clear() {
	for c.order.Len() > 0 {
		c.removeElement(c.order.Back())
	}
}

// size returns the entries and bytes held.
func (c *lru[K, V]) size() (int, int64) { return c.order.Len(), c.bytes }
