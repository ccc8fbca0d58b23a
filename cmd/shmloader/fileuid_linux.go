package main

import (
	"io/fs"
	"syscall"
)

const syscallNoFollow = syscall.O_NOFOLLOW

func fileUID(fi fs.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}
