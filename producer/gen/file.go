package gen

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/shmloader/shmloader/producer/dataset"
	"github.com/shmloader/shmloader/producer/pages"
)

// GenKey is the footer entry recording the Config a file was made with.
const GenKey = "shmloader.gen"

// writeFile writes rows lo..hi-1 to path, through a hidden temporary file renamed into
// place only once it is complete and synced.
func writeFile(ctx context.Context, cfg Config, b *batcher, path string, lo, hi int64, p *progress) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			err = fmt.Errorf("%s: %w", path, err)
		}
	}()
	codec, _ := codec(cfg.Compression) // validated
	opts := []parquet.WriterProperty{
		parquet.WithCompression(codec),
		parquet.WithMaxRowGroupLength(cfg.RowGroupRows),
		parquet.WithStats(true),
	}
	// Ids and features are (nearly) all distinct: a dictionary only costs time, in gen
	// and in every decode. Categoricals, strings, lists and the label keep arrow-go's
	// default dictionary encoding.
	for _, c := range b.cols {
		if c.kind == kindID || c.kind == kindFeature {
			opts = append(opts, parquet.WithDictionaryFor(c.name, false))
		}
	}
	pages.RegisterCodecs() // LZ4 is ours, not arrow-go's
	props := parquet.NewWriterProperties(opts...)
	bw := bufio.NewWriterSize(countingWriter{w: tmp, n: &p.bytes}, 1<<20)
	fw, err := pqarrow.NewFileWriter(b.schema, bw, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return err
	}
	for r := lo; r < hi; r += cfg.RowGroupRows {
		if err := context.Cause(ctx); err != nil {
			fw.Close()
			return err
		}
		end := min(r+cfg.RowGroupRows, hi)
		rec := b.batch(r, end)
		err := fw.Write(rec) // one record, one row group
		rec.Release()
		if err != nil {
			return err
		}
		p.rows.Add(end - r)
	}
	// Every row group is closed and on disk: checksum the chunks, then the footer.
	meta, err := fw.FileMetadata()
	if err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	sums, err := dataset.ChunkChecksums(tmp, meta)
	if err != nil {
		return err
	}
	if err := fw.AppendKeyValueMetadata(dataset.ChecksumKey, sums); err != nil {
		return err
	}
	if err := fw.AppendKeyValueMetadata(GenKey, cfg.String()); err != nil {
		return err
	}
	if err := fw.Close(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil { // CreateTemp's 0600 suits no dataset
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
