package dataset

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/pierrec/lz4/v4"

	"github.com/shmloader/shmloader/producer/pages"
)

// pageBodies returns the bodies of the pages of column chunk leaf of row group rg.
func pageBodies(t *testing.T, path string, rg, leaf int) [][]byte {
	t.Helper()
	f, err := readLocal(path)
	if err != nil {
		t.Fatal(err)
	}
	start, n, _ := chunkRange(footerOf(t, f), rg, leaf)
	data, _ := os.ReadFile(path)
	chunk := data[start : start+n]
	var bodies [][]byte
	for pos := 0; pos < len(chunk); {
		h, err := pages.ParseHeader(chunk[pos:])
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, chunk[pos+h.Size:pos+h.Size+h.Compressed])
		pos += h.Size + h.Compressed
	}
	return bodies
}

// A file arrow-go writes with the LZ4 codec reads back equal, pages of several Hadoop
// blocks included.
func TestLZ4File(t *testing.T) {
	dir := t.TempDir()
	// 100000 rows of column a in one 4 MiB page: 800 kB, more than 3 blocks.
	path := writeTest(t, dir, "a.parquet", 0, 130000, writeOpts{rgRows: 100000, codec: compress.Codecs.Lz4, checksums: true,
		props: []parquet.WriterProperty{parquet.WithDataPageSize(4 << 20), parquet.WithDictionaryDefault(false)}})
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range footerOf(t, d.Files[0]).Schema.NumColumns() {
		cc, err := footerOf(t, d.Files[0]).RowGroup(0).ColumnChunk(i)
		if err != nil || cc.Compression() != compress.Codecs.Lz4 {
			t.Fatalf("column %d: %v (%v)", i, cc.Compression(), err)
		}
	}
	most := 0
	for _, body := range pageBodies(t, path, 0, 0) {
		blocks := 0 // each a big-endian decompressed and compressed size, then the block
		for b := body; len(b) >= 8; b = b[8+binary.BigEndian.Uint32(b[4:]):] {
			blocks++
		}
		most = max(most, blocks)
	}
	if most < 4 {
		t.Errorf("column a's pages hold at most %d blocks, want a page of 4", most)
	}
	checkAllValues(t, d, 100000)
}

// legacyLZ4 writes LZ4 pages as older writers did: one raw block, or an LZ4 frame.
type legacyLZ4 struct {
	pages.LZ4HadoopCodec
	frame bool
}

func (c legacyLZ4) Encode(dst, src []byte) []byte {
	if c.frame {
		var buf bytes.Buffer
		w := lz4.NewWriter(&buf)
		if _, err := w.Write(src); err != nil || w.Close() != nil {
			panic(err)
		}
		return buf.Bytes()
	}
	out := make([]byte, lz4.CompressBlockBound(len(src)))
	n, err := lz4.CompressBlock(src, out, nil)
	if err != nil {
		panic(err)
	}
	return out[:n]
}

func (c legacyLZ4) EncodeLevel(dst, src []byte, _ int) []byte { return c.Encode(dst, src) }

func (legacyLZ4) CompressBound(n int64) int64 { return int64(lz4.CompressBlockBound(int(n))) + 64 }

// Files of older writers read the same as Hadoop-framed ones.
func TestLZ4LegacyFiles(t *testing.T) {
	pages.RegisterCodecs() // first, so that it cannot undo the legacy codec below
	for _, frame := range []bool{false, true} {
		dir := t.TempDir()
		compress.RegisterCodec(compress.Codecs.Lz4, legacyLZ4{frame: frame})
		path := writeTest(t, dir, "a.parquet", 0, 250, writeOpts{rgRows: 100, codec: compress.Codecs.Lz4})
		compress.RegisterCodec(compress.Codecs.Lz4, pages.LZ4HadoopCodec{})
		body := pageBodies(t, path, 0, 0)[0]
		if isFrame := binary.LittleEndian.Uint32(body) == 0x184D2204; isFrame != frame { // the LZ4 frame magic
			t.Fatalf("frame %v: the page starts % x", frame, body[:4])
		}
		d, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		checkAllValues(t, d, 100)
	}
}

// A page that is no form of LZ4 is an error naming the file, row group and column.
func TestLZ4CorruptPage(t *testing.T) {
	dir := t.TempDir()
	path := writeTest(t, dir, "a.parquet", 0, 200, writeOpts{rgRows: 100, codec: compress.Codecs.Lz4})
	f, err := readLocal(path)
	if err != nil {
		t.Fatal(err)
	}
	start, _, _ := chunkRange(footerOf(t, f), 1, 1) // column b of row group 1
	data, _ := os.ReadFile(path)
	h, err := pages.ParseHeader(data[start:])
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint32(data[start+int64(h.Size)+4:], 1<<30) // the first block's compressed size
	os.WriteFile(path, data, 0o644)
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.OpenReader(d.Files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.ReadRowGroup(context.Background(), 1, []string{"a", "b"})
	var de *Error
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &de) || de.Path != path || de.RowGroup != 1 || de.Column != "b" {
		t.Fatalf("got %v, want ErrCorrupt naming the file, row group 1 and column b", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "not Hadoop-framed (block 0 at byte 0: compressed size 1073741824 runs past") {
		t.Errorf("message %q does not say what is wrong", msg)
	}
}
