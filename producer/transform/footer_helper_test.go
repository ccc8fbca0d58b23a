package transform

import (
	"testing"

	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/shmloader/shmloader/producer/dataset"
)

// footerOf is f's parsed footer.
func footerOf(t testing.TB, f *dataset.File) *metadata.FileMetaData {
	t.Helper()
	m, err := f.Footer()
	if err != nil {
		t.Fatal(err)
	}
	return m
}
