package runstate

// MaxBins is the number of bins per lane of a run's Bins at level 0: as
// the run grows past them, the bins of every level double in width.
const MaxBins = 8192

// BinLevels is the number of levels of Bins: level l's bins are 4^l
// times as wide as level 0's.
const BinLevels = 3

// Bins are a run's span time per lane, stage and bin of time, bins of
// Width(level) ns from the run's clock's zero: a drawing of a long
// window sums the bins of the level that suits it instead of walking
// every span in it. Time before zero is left out (no span of a run
// starts much before its start).
type Bins struct {
	width  int64 // level 0's
	levels [BinLevels][]laneBins
}

// laneBins is one lane's bins: cov[b*len(stages)+j] is the time stage
// stages[j] covers in bin b.
type laneBins struct {
	stages []uint16
	cov    []int64
	n      int // bins in use
}

// Width returns the width in ns of a level's bins (0 before the first
// span).
func (b *Bins) Width(level int) int64 { return b.width << (2 * level) }

// Lane returns lane's bins: the stages that cover any time on it, and
// the time each covers in bin k at cov[k*len(stages)+j], for the bins in
// use (len(cov)/len(stages) of them; later bins are empty). The slices
// are the run's: read them under the set's lock, do not keep them.
func (b *Bins) Lane(level int, lane uint16) (stages []uint16, cov []int64) {
	if int(lane) >= len(b.levels[level]) {
		return nil, nil
	}
	l := &b.levels[level][lane]
	return l.stages, l.cov[:l.n*len(l.stages)]
}

// add adds a span's time to the bins it covers.
func (b *Bins) add(start, dur int64, stage, lane uint16) {
	end := start + dur
	start = max(start, 0)
	if end <= start {
		return
	}
	if b.width == 0 {
		b.width = 1024
	}
	for end > b.width*MaxBins {
		b.double()
	}
	for level := range b.levels {
		lv := &b.levels[level]
		for int(lane) >= len(*lv) {
			*lv = append(*lv, laneBins{})
		}
		(*lv)[lane].add(start, end, stage, b.Width(level))
	}
}

// add adds the time of [start, end) to the lane's bins of width w.
func (l *laneBins) add(start, end int64, stage uint16, w int64) {
	j := l.slot(stage)
	ns := len(l.stages)
	k0, k1 := int(start/w), int((end-1)/w)
	if k1 >= l.n {
		l.grow(k1+1, ns)
	}
	for k := k0; k <= k1; k++ {
		lo, hi := int64(k)*w, int64(k+1)*w
		l.cov[k*ns+j] += min(end, hi) - max(start, lo)
	}
}

// slot returns stage's index in the lane's stages, adding it.
func (l *laneBins) slot(stage uint16) int {
	for j, s := range l.stages {
		if s == stage {
			return j
		}
	}
	ns := len(l.stages)
	cov := make([]int64, l.n*(ns+1))
	for k := range l.n {
		copy(cov[k*(ns+1):k*(ns+1)+ns], l.cov[k*ns:(k+1)*ns])
	}
	l.stages, l.cov = append(l.stages, stage), cov
	return ns
}

// grow makes n bins usable.
func (l *laneBins) grow(n, ns int) {
	need := n * ns
	if need > cap(l.cov) {
		c := make([]int64, len(l.cov), max(need, 2*cap(l.cov)))
		copy(c, l.cov)
		l.cov = c
	}
	l.cov = l.cov[:need]
	clear(l.cov[l.n*ns:])
	l.n = n
}

// double doubles the bins' width, each new bin the sum of two.
func (b *Bins) double() {
	for level := range b.levels {
		for i := range b.levels[level] {
			b.levels[level][i].double()
		}
	}
	b.width *= 2
}

// double merges each pair of bins into one.
func (l *laneBins) double() {
	ns := len(l.stages)
	n := (l.n + 1) / 2
	for k := range n {
		for j := range ns {
			v := l.cov[2*k*ns+j]
			if 2*k+1 < l.n {
				v += l.cov[(2*k+1)*ns+j]
			}
			l.cov[k*ns+j] = v
		}
	}
	l.cov, l.n = l.cov[:n*ns], n
}
