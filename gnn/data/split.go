package data

import (
	"fmt"
	"math"
	"slices"

	"github.com/gnnscope/gnnscope/gnn/rng"
)

// Stream tags that keep the splits' random draws apart from any other use of
// the same user seed.
const (
	splitTagPerClass = 0x5350_4c49_5431 // "SPLIT1"
	splitTagFraction = 0x5350_4c49_5432 // "SPLIT2"
)

// PerClassSplit makes a Planetoid-style split: perClass random nodes of every
// class for training, then numValid and numTest random nodes from the
// remaining labeled nodes (label >= 0; -1 marks unlabeled nodes, which are
// never picked). The same seed always gives the same split. Each list is
// returned sorted. The usual choice for citation graphs is 20 / 500 / 1000.
//
// It fails when a class has fewer than perClass labeled nodes, or when fewer
// than numValid+numTest labeled nodes remain after the training picks.
func PerClassSplit(labels []int32, numClasses, perClass, numValid, numTest int, seed uint64) (*Split, error) {
	if numClasses <= 0 {
		return nil, fmt.Errorf("per-class split: %d classes", numClasses)
	}
	if perClass < 0 || numValid < 0 || numTest < 0 {
		return nil, fmt.Errorf("per-class split: negative size (per class %d, valid %d, test %d)", perClass, numValid, numTest)
	}
	if int64(numClasses) > math.MaxInt32 {
		return nil, fmt.Errorf("per-class split: %d classes is too many", numClasses)
	}
	byClass := make([][]int32, numClasses)
	for v, y := range labels {
		if y < -1 || y >= int32(numClasses) {
			return nil, fmt.Errorf("per-class split: label %d of node %d outside [0, %d)", y, v, numClasses)
		}
		if y >= 0 {
			byClass[y] = append(byClass[y], int32(v))
		}
	}
	r := rng.New(seed, splitTagPerClass)
	chosen := make([]bool, len(labels))
	train := make([]int32, 0, perClass*numClasses)
	for c, nodes := range byClass {
		if len(nodes) < perClass {
			return nil, fmt.Errorf("per-class split: class %d has %d labeled nodes, need %d for training", c, len(nodes), perClass)
		}
		r.Shuffle(nodes)
		for _, v := range nodes[:perClass] {
			chosen[v] = true
			train = append(train, v)
		}
	}
	rest := make([]int32, 0, len(labels))
	for v, y := range labels {
		if y >= 0 && !chosen[v] {
			rest = append(rest, int32(v))
		}
	}
	if len(rest) < numValid+numTest {
		return nil, fmt.Errorf("per-class split: %d labeled nodes left after %d training picks, need %d validation + %d test",
			len(rest), len(train), numValid, numTest)
	}
	r.Shuffle(rest)
	s := &Split{
		Train: train,
		Valid: slices.Clone(rest[:numValid]),
		Test:  slices.Clone(rest[numValid : numValid+numTest]),
	}
	s.sort()
	return s, nil
}

// FractionSplit splits the labeled nodes (label >= 0) at random: a fraction
// train of them for training, valid for validation and the rest for testing.
// Counts are rounded to the nearest node. The same seed always gives the same
// split; each list is returned sorted.
func FractionSplit(labels []int32, train, valid float64, seed uint64) (*Split, error) {
	if !(train >= 0 && valid >= 0 && train+valid <= 1) { // also rejects NaN
		return nil, fmt.Errorf("fraction split: train %g and valid %g must be >= 0 and sum to at most 1", train, valid)
	}
	nodes := make([]int32, 0, len(labels))
	for v, y := range labels {
		if y >= 0 {
			nodes = append(nodes, int32(v))
		}
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("fraction split: no labeled nodes among %d", len(labels))
	}
	n := len(nodes)
	nTrain := int(math.Round(train * float64(n)))
	nValid := int(math.Round(valid * float64(n)))
	if nTrain > n {
		nTrain = n
	}
	if nTrain+nValid > n {
		nValid = n - nTrain
	}
	rng.New(seed, splitTagFraction).Shuffle(nodes)
	s := &Split{
		Train: nodes[:nTrain:nTrain],
		Valid: nodes[nTrain : nTrain+nValid : nTrain+nValid],
		Test:  nodes[nTrain+nValid:],
	}
	s.sort()
	return s, nil
}

func (s *Split) sort() {
	slices.Sort(s.Train)
	slices.Sort(s.Valid)
	slices.Sort(s.Test)
}
