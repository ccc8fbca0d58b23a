package transform

import "golang.org/x/sys/cpu"

// subDiv sets x[k] = (x[k] - mean) / std. Division is most of normalize's cost, and AVX2
// divides 4 float64 at a time with the same IEEE rounding as one at a time.
func subDiv(x []float64, mean, std float64) {
	if useAVX2 && len(x) >= 8 {
		subDivAVX2(x, mean, std)
		return
	}
	subDivGo(x, mean, std)
}

var useAVX2 = cpu.X86.HasAVX2

//go:noescape
func subDivAVX2(x []float64, mean, std float64)
