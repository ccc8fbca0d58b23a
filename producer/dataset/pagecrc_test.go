package dataset

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"

	"github.com/shmloader/shmloader/producer/pages"
)

// addPageCRCs rewrites the Parquet file src (written by arrow-go, which sets no page CRC)
// into dst with a CRC in every page header, moving the pages and fixing the footer, to
// stand for a file from a writer that sets page CRCs (parquet-mr, pyarrow).
func addPageCRCs(t *testing.T, src, dst string) {
	t.Helper()
	f, err := readLocal(src)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(src)
	var out bytes.Buffer
	out.Write(magic)
	for i, rg := range footerOf(t, f).RowGroups {
		rgStart, rgSize := int64(out.Len()), int64(0)
		for j, cc := range rg.Columns {
			start, n, _ := chunkRange(footerOf(t, f), i, j)
			moved := map[int64]int64{}
			added := int64(0)
			for pos := start; pos < start+n; {
				h, err := pages.ParseHeader(data[pos:])
				if err != nil || h.HasCRC {
					t.Fatalf("page at %d: %v %+v", pos, err, h)
				}
				moved[pos] = int64(out.Len())
				body := data[pos+int64(h.Size) : pos+int64(h.Size+h.Compressed)]
				hdr := withCRC(data[pos:pos+int64(h.Size)], h, int32(crc32.ChecksumIEEE(body)))
				added += int64(len(hdr) - h.Size)
				out.Write(hdr)
				out.Write(body)
				pos += int64(h.Size + h.Compressed)
			}
			md := cc.MetaData
			md.DataPageOffset = moved[md.DataPageOffset]
			if d := md.DictionaryPageOffset; d != nil {
				v := moved[*d]
				md.DictionaryPageOffset = &v
			}
			md.TotalCompressedSize += added
			md.TotalUncompressedSize += added
			rgSize += md.TotalCompressedSize
		}
		rg.FileOffset, rg.TotalCompressedSize = &rgStart, &rgSize
	}
	raw, err := footerOf(t, f).Serialize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out.Write(raw)
	out.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(raw))))
	out.Write(magic)
	if err := os.WriteFile(dst, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// withCRC inserts field 4 (crc) after field 3 of a compact-protocol page header.
func withCRC(hdr []byte, h pages.Header, crc int32) []byte {
	b := append([]byte(nil), hdr[:h.RestAt]...)
	b = append(b, 1<<4|5) // field delta 1, compact type i32
	b = binary.AppendUvarint(b, uint64(uint32(crc<<1^crc>>31)))
	rest := append([]byte(nil), hdr[h.RestAt:]...)
	if h.RestID > 4 && rest[0]>>4 != 0 { // the next field's id delta was from 3, now from 4
		rest[0] = (rest[0]>>4-1)<<4 | rest[0]&0x0f
	}
	return append(b, rest...)
}

func TestPageCRCs(t *testing.T) {
	dir := t.TempDir()
	plain := writeTest(t, dir, "plain.parquet", 0, 300, writeOpts{rgRows: 100, codec: compress.Codecs.Snappy})
	path := dir + "/crc.parquet"
	addPageCRCs(t, plain, path)
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	checkAllValues(t, d, 100)
	seen := 0
	for j := range footerOf(t, d.Files[0]).Schema.NumColumns() {
		start, n, _ := chunkRange(footerOf(t, d.Files[0]), 2, j)
		data, _ := os.ReadFile(path)
		for pos := start; pos < start+n; seen++ {
			h, err := pages.ParseHeader(data[pos:])
			if err != nil || !h.HasCRC {
				t.Fatalf("rewritten page at %d: %v, %+v", pos, err, h)
			}
			pos += int64(h.Size + h.Compressed)
		}
	}
	if seen < 4 {
		t.Fatalf("only %d pages in row group 2", seen)
	}

	// Flip one byte in the middle of the first page body of column s in row group 2.
	start, _, _ := chunkRange(footerOf(t, d.Files[0]), 2, 2)
	data, _ := os.ReadFile(path)
	h, _ := pages.ParseHeader(data[start:])
	data[start+int64(h.Size+h.Compressed/2)] ^= 0x01
	os.WriteFile(path, data, 0o644)
	d, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.OpenReader(d.Files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.ReadRowGroup(context.Background(), 2, []string{"a", "b", "s", "l"})
	var de *Error
	if !errors.Is(err, ErrChecksum) || !errors.As(err, &de) || de.RowGroup != 2 || de.Column != "s" {
		t.Fatalf("got %v, want a page CRC error in row group 2, column s", err)
	}
}

func TestParsePageHeaderRejectsGarbage(t *testing.T) {
	for _, b := range [][]byte{
		nil, {0}, {0x15}, {0x15, 0x02, 0x15}, // truncated or missing required fields
		{0x15, 0x00, 0x15, 0x02, 0x15, 0x01, 0x19, 0xfc}, // a list claiming 15+ elements in 0 bytes
		{0x15, 0x00, 0x15, 0x02, 0x16, 0x02, 0x00},       // field 3 with the wrong type
		bytes.Repeat([]byte{0x1c}, 100),                  // structs nested past the limit
	} {
		if h, err := pages.ParseHeader(b); err == nil {
			t.Errorf("pages.ParseHeader(%x) = %+v, want an error", b, h)
		}
	}
	if _, _, err := verifyPages([]byte{0x15, 0x00, 0x15, 0x08, 0x15, 0x08, 0x00, 1, 2}, 9, compress.Codecs.Uncompressed, 0); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a body past the chunk: %v", err)
	}
}

func FuzzPageHeader(f *testing.F) {
	f.Add([]byte{0x15, 0x00, 0x15, 0x08, 0x15, 0x08, 0x15, 0x02, 0x2c, 0x15, 0x02, 0x00, 0x00})
	f.Add([]byte{0x15, 0x04, 0x15, 0x10, 0x15, 0x10, 0x4c, 0x15, 0x04, 0x15, 0x00, 0x00, 1, 2, 3, 4})
	f.Add([]byte{0x19, 0xf8, 0x7f, 0x1b, 0x05, 0x35, 0x18, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := pages.ParseHeader(b)
		if err == nil && (h.Size <= 0 || h.Size > len(b) || h.Compressed < 0) {
			t.Fatalf("accepted header with size %d of %d bytes, body %d", h.Size, len(b), h.Compressed)
		}
		verifyPages(b, len(b), compress.Codecs.Zstd, 0)
	})
}
