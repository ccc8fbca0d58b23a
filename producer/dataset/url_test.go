package dataset

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

// A dataset named by a URL is refused at once, saying that only local files are read,
// not looked for as a relative path that does not exist.
func TestURLsAreRefused(t *testing.T) {
	for _, ds := range []string{"s3://bucket/train", "gs://b/x/*.parquet", "hdfs://nn/x", "https://host/x.parquet"} {
		_, err := Open(ds)
		if err == nil || !strings.Contains(err.Error(), "local files only") || !strings.Contains(err.Error(), ds) {
			t.Errorf("%s: %v", ds, err)
		}
	}
	for _, ds := range []string{"no/such/dir", "./a://b"} {
		_, err := Open(ds)
		if err == nil || strings.Contains(err.Error(), "local files only") || !(errors.Is(err, ErrNoFiles) || errors.Is(err, fs.ErrNotExist)) {
			t.Errorf("%s: want not found, got %v", ds, err)
		}
	}
}
