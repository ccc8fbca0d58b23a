package transform

import "unsafe"

// fuseF32Asm stores the first multiple of 4 of the values with AVX2 and returns how many.
func fuseF32Asm(f *fuseF32, p unsafe.Pointer, stride uintptr, vals, null []byte) int {
	n := len(vals) / 4 &^ 3
	if !useAVX2 || n == 0 {
		return 0
	}
	var nullp *byte
	if null != nil {
		nullp = unsafe.SliceData(null)
	}
	flags := 0
	if f.norm {
		flags |= 1
	}
	if f.prefill {
		flags |= 2
	}
	fuseF32AVX(p, stride, unsafe.SliceData(vals), nullp, n/4, f.mean, f.std, f.pre, f.post, flags)
	return n
}

//go:noescape
func fuseF32AVX(dst unsafe.Pointer, stride uintptr, src *byte, null *byte, quads int, mean, std, pre, post float64, flags int)
