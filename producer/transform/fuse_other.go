//go:build !amd64

package transform

import "unsafe"

func fuseF32Asm(f *fuseF32, p unsafe.Pointer, stride uintptr, vals, null []byte) int {
	return 0
}
