package cpu

// Small vector loops shared by the kernels, unrolled by four with the
// slices resliced up front so the compiler drops the bounds checks.

// axpyVec sets y += a*x (len(x) == len(y)).
func axpyVec(a float32, x, y []float32) {
	y = y[:len(x)]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		xs := x[i : i+4 : i+4]
		ys := y[i : i+4 : i+4]
		ys[0] += a * xs[0]
		ys[1] += a * xs[1]
		ys[2] += a * xs[2]
		ys[3] += a * xs[3]
	}
	for ; i < len(x); i++ {
		y[i] += a * x[i]
	}
}

// addVec sets y += x.
func addVec(x, y []float32) {
	y = y[:len(x)]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		xs := x[i : i+4 : i+4]
		ys := y[i : i+4 : i+4]
		ys[0] += xs[0]
		ys[1] += xs[1]
		ys[2] += xs[2]
		ys[3] += xs[3]
	}
	for ; i < len(x); i++ {
		y[i] += x[i]
	}
}

// scaleVecTo sets y = a*x.
func scaleVecTo(a float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = a * v
	}
}

// scaleVec sets x *= a.
func scaleVec(a float32, x []float32) {
	for i := range x {
		x[i] *= a
	}
}
