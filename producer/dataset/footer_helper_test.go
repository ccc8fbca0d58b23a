package dataset

import (
	"testing"

	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// footerOf is f's parsed footer.
func footerOf(t testing.TB, f *File) *metadata.FileMetaData {
	t.Helper()
	m, err := f.Footer()
	if err != nil {
		t.Fatal(err)
	}
	return m
}
