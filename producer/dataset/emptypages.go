package dataset

import (
	"github.com/shmloader/shmloader/producer/pages"
)

// dropEmptyPages removes the data pages of 0 values from a column chunk (its first n
// bytes, verified) in place, and returns the chunk's new length: the pages after one
// move up and the freed bytes at the end become zeros. A page of no values is valid Parquet, but arrow-go, like Arrow C++,
// takes one for the end of the chunk and would decode too few rows (pyarrow then
// silently returns fewer rows; the page decoder skips such pages). arrow-go reads a
// chunk's pages only until it has the footer's row count, so it never reaches the
// zeros.
func dropEmptyPages(chunk []byte, n int) int {
	for pos := 0; pos < n; {
		h, err := pages.ParseHeader(chunk[pos:n])
		if err != nil || h.Compressed > n-pos-h.Size {
			return n // verifyPages would have refused it; leave the bytes as they are
		}
		size := h.Size + h.Compressed
		if (h.Type == pages.DataPage || h.Type == pages.DataPageV2) && h.NumValues == 0 {
			copy(chunk[pos:n], chunk[pos+size:n])
			clear(chunk[n-size : n])
			n -= size
			continue
		}
		pos += size
	}
	return n
}
