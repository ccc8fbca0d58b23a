package dataset

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/shmloader/shmloader/producer/internal/thrift"
)

// rawFooter is the footer of the file at path, as stored.
func rawFooter(t testing.TB, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	return b[len(b)-8-n : len(b)-8]
}

// The codec writes back the footers it reads byte for byte (writers use the short field
// headers it writes), and sanitizeFooter leaves a footer of known types alone.
func TestThriftRoundTrip(t *testing.T) {
	dir := t.TempDir()
	writeTest(t, dir, "a.parquet", 0, 100, writeOpts{rgRows: 30, checksums: true})
	writeLogical(t, filepath.Join(dir, "b.parquet"), 10)
	for _, name := range []string{"a.parquet", "b.parquet"} {
		raw := rawFooter(t, filepath.Join(dir, name))
		r := thrift.NewReader(raw)
		v, err := r.Struct()
		if err != nil || r.Pos() != len(raw) {
			t.Fatalf("%s: read %d of %d bytes: %v", name, r.Pos(), len(raw), err)
		}
		if out := thrift.Append(nil, thrift.Struct, v); !bytes.Equal(out, raw) {
			t.Fatalf("%s: written back differently (%d bytes, read %d)", name, len(out), len(raw))
		}
		out, notes, err := sanitizeFooter(raw)
		if err != nil || notes != nil || !bytes.Equal(out, raw) {
			t.Fatalf("%s: sanitizeFooter changed a footer of known types: %v %q", name, err, notes)
		}
	}
}

// No footer bytes make the codec panic or loop, and what sanitizeFooter returns reads
// back.
func FuzzSanitizeFooter(f *testing.F) {
	dir := f.TempDir()
	writeTest(f, dir, "a.parquet", 0, 20, writeOpts{rgRows: 10})
	f.Add(rawFooter(f, filepath.Join(dir, "a.parquet")))
	f.Add([]byte{0x19, 0x1c, 0x1c, 0x00, 0x00})
	f.Add([]byte{0x09, 0x0c, 0xcc, 0x00, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, notes, err := sanitizeFooter(raw)
		if err != nil || len(notes) == 0 {
			return
		}
		if _, err := thrift.NewReader(out).Struct(); err != nil {
			t.Fatalf("sanitized footer does not read back: %v", err)
		}
	})
}
