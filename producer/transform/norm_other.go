//go:build !amd64

package transform

// subDiv sets x[k] = (x[k] - mean) / std.
func subDiv(x []float64, mean, std float64) { subDivGo(x, mean, std) }
