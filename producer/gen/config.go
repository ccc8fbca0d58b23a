// Package gen writes the synthetic Parquet dataset used by demos, tests and benchmarks:
// an id, float features with per-feature mean and scale, int64 and string categoricals of
// varied cardinality, a variable-length list and a 0/1 label, with nulls in some columns.
//
// Every value is a pure function of (seed, row id, column name), computed with splitmix64,
// so the split into files and row groups never changes a value, and the same Config always
// produces byte-identical files. Files are written through arrow-go's pqarrow writer to a
// hidden temporary name and renamed into place, so an interrupted run leaves no half file.
// arrow-go cannot write Parquet page CRCs, so each footer carries a CRC of every column
// chunk instead (dataset.ChecksumKey), which dataset.Reader verifies.
package gen

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/compress"
)

// Config describes one dataset. Start from DefaultConfig: in Write a zero Rows, Files,
// RowGroupRows or Compression takes its default, but zero Features, Categoricals,
// Strings, ListMax and NullFraction mean none.
type Config struct {
	Out          string  // output directory (required); created if missing
	Rows         int64   // rows in all; ids are 0..Rows-1 in file order
	Files        int     // files part-00000.parquet ...; rows are split evenly
	RowGroupRows int64   // rows per row group (the last of a file may be smaller)
	Compression  string  // "snappy", "zstd", "lz4", "lz4_raw" or "none"
	Features     int     // float32 columns f000.. (at most 1000)
	Categoricals int     // int64 categorical columns c00.. (at most 100)
	Strings      int     // string categorical columns s00.. (at most 100)
	ListMax      int     // longest list in column seq
	NullFraction float64 // share of nulls in the nullable columns, 0..1
	Seed         uint64  // every value derives from it
	Overwrite    bool    // write into a non-empty directory, replacing its *.parquet files
}

// DefaultConfig is the demo dataset: 1M rows in 8 files of 16384-row groups (64 row
// groups, enough for shuffling to matter), 100 features, 26 int and 4 string categoricals.
func DefaultConfig() Config {
	return Config{
		Rows:         1_000_000,
		Files:        8,
		RowGroupRows: 16384,
		Compression:  "snappy",
		Features:     100,
		Categoricals: 26,
		Strings:      4,
		ListMax:      20,
		NullFraction: 0.05,
	}
}

// Limits that keep column names at their fixed width (f000, c00, s00).
const (
	MaxFeatures     = 1000
	MaxCategoricals = 100
	MaxStrings      = 100
)

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Rows == 0 {
		c.Rows = d.Rows
	}
	if c.Files == 0 {
		c.Files = d.Files
	}
	if c.RowGroupRows == 0 {
		c.RowGroupRows = d.RowGroupRows
	}
	if c.Compression == "" {
		c.Compression = d.Compression
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.Out == "":
		return fmt.Errorf("no output directory")
	case c.Rows < 1:
		return fmt.Errorf("rows %d: need at least 1", c.Rows)
	case c.Files < 1 || int64(c.Files) > c.Rows:
		return fmt.Errorf("files %d: need 1 to rows (%d)", c.Files, c.Rows)
	case c.Files > 100000:
		return fmt.Errorf("files %d: at most 100000 (five-digit names)", c.Files)
	case c.RowGroupRows < 1:
		return fmt.Errorf("row group rows %d: need at least 1", c.RowGroupRows)
	case c.Features < 0 || c.Features > MaxFeatures:
		return fmt.Errorf("features %d: need 0 to %d", c.Features, MaxFeatures)
	case c.Categoricals < 0 || c.Categoricals > MaxCategoricals:
		return fmt.Errorf("categoricals %d: need 0 to %d", c.Categoricals, MaxCategoricals)
	case c.Strings < 0 || c.Strings > MaxStrings:
		return fmt.Errorf("strings %d: need 0 to %d", c.Strings, MaxStrings)
	case c.ListMax < 0:
		return fmt.Errorf("list max %d: need at least 0", c.ListMax)
	case !(c.NullFraction >= 0 && c.NullFraction <= 1):
		return fmt.Errorf("null fraction %v: need 0 to 1", c.NullFraction)
	}
	_, err := codec(c.Compression)
	return err
}

func codec(name string) (compress.Compression, error) {
	switch strings.ToLower(name) {
	case "snappy":
		return compress.Codecs.Snappy, nil
	case "zstd":
		return compress.Codecs.Zstd, nil
	case "lz4": // Parquet's deprecated LZ4, Hadoop-framed (see pages.DecodeLZ4Hadoop)
		return compress.Codecs.Lz4, nil
	case "lz4_raw":
		return compress.Codecs.Lz4Raw, nil
	case "none", "uncompressed":
		return compress.Codecs.Uncompressed, nil
	}
	return 0, fmt.Errorf("compression %q: want snappy, zstd, lz4, lz4_raw or none", name)
}

// String is the footer's record of how a file was made (key "shmloader.gen").
func (c Config) String() string {
	return fmt.Sprintf("seed=%d rows=%d files=%d row_group_rows=%d compression=%s features=%d categoricals=%d strings=%d list_max=%d null_fraction=%g",
		c.Seed, c.Rows, c.Files, c.RowGroupRows, strings.ToLower(c.Compression), c.Features, c.Categoricals, c.Strings, c.ListMax, c.NullFraction)
}
