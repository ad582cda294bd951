package partition

// pqueue is an indexed max-heap of vertices keyed by gain.
type pqueue struct {
	heap []int32
	key  []int64 // by vertex
	pos  []int32 // by vertex; -1 when absent
}

func newPQ(n int) *pqueue {
	q := &pqueue{key: make([]int64, n), pos: make([]int32, n)}
	for i := range q.pos {
		q.pos[i] = -1
	}
	return q
}

func (q *pqueue) reset() {
	for _, v := range q.heap {
		q.pos[v] = -1
	}
	q.heap = q.heap[:0]
}

func (q *pqueue) len() int { return len(q.heap) }

func (q *pqueue) has(v int32) bool { return q.pos[v] >= 0 }

func (q *pqueue) push(v int32, k int64) {
	q.key[v] = k
	q.pos[v] = int32(len(q.heap))
	q.heap = append(q.heap, v)
	q.up(len(q.heap) - 1)
}

func (q *pqueue) update(v int32, k int64) {
	old := q.key[v]
	q.key[v] = k
	i := int(q.pos[v])
	if k > old {
		q.up(i)
	} else {
		q.down(i)
	}
}

func (q *pqueue) remove(v int32) {
	i := int(q.pos[v])
	last := len(q.heap) - 1
	q.swap(i, last)
	q.heap = q.heap[:last]
	q.pos[v] = -1
	if i < last {
		q.up(i)
		q.down(i)
	}
}

// pop removes and returns the vertex with the largest key.
func (q *pqueue) pop() int32 {
	v := q.heap[0]
	q.remove(v)
	return v
}

func (q *pqueue) swap(i, j int) {
	q.heap[i], q.heap[j] = q.heap[j], q.heap[i]
	q.pos[q.heap[i]] = int32(i)
	q.pos[q.heap[j]] = int32(j)
}

func (q *pqueue) less(i, j int) bool {
	ki, kj := q.key[q.heap[i]], q.key[q.heap[j]]
	if ki != kj {
		return ki < kj
	}
	return q.heap[i] > q.heap[j]
}

func (q *pqueue) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(p, i) {
			return
		}
		q.swap(p, i)
		i = p
	}
}

func (q *pqueue) down(i int) {
	n := len(q.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && q.less(l, r) {
			c = r
		}
		if !q.less(i, c) {
			return
		}
		q.swap(i, c)
		i = c
	}
}
