package pages

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// zstdContentSize reads the content size of frames the encoder wrote, in each width of
// the field, and says nothing for a frame that names no size, a cut header, a skippable
// frame or bytes that are no zstd frame.
func TestZstdContentSize(t *testing.T) {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	// A 1-byte field (single segment) for 0, 2 bytes for 256 to 65791, 4 above.
	for _, n := range []int{0, 256, 65791, 65792, 1 << 20} {
		frame := enc.EncodeAll(bytes.Repeat([]byte{7}, n), nil)
		if got, ok := zstdContentSize(frame); !ok || got != uint64(n) {
			t.Errorf("frame of %d bytes: content size %d, %v", n, got, ok)
		}
		if err := CheckBody(compress.Codecs.Zstd, frame, n); err != nil {
			t.Errorf("frame of %d bytes in a page of %d: %v", n, n, err)
		}
	}

	// Frames that do not name their size: the encoder leaves the field out for a few
	// bytes (it would need a single segment), and a stream does not know it up front.
	var streamed bytes.Buffer
	w, err := zstd.NewWriter(&streamed, zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := w.Write(bytes.Repeat([]byte{byte(i)}, 100_000)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		frame []byte
		n     int
	}{
		"100 bytes": {enc.EncodeAll(bytes.Repeat([]byte{7}, 100), nil), 100},
		"streamed":  {streamed.Bytes(), 20 * 100_000},
	} {
		if fhd := c.frame[4]; fhd>>6 != 0 || fhd&(1<<5) != 0 {
			t.Fatalf("%s: the frame names a content size: descriptor %#x", name, fhd)
		}
		if out, err := dec.DecodeAll(c.frame, nil); err != nil || len(out) != c.n {
			t.Fatalf("%s: decoded %d bytes, %v", name, len(out), err)
		}
		if got, ok := zstdContentSize(c.frame); ok {
			t.Errorf("%s: content size %d, want none", name, got)
		}
		// Nothing to refuse before decoding: the decoder is bounded by the page's size.
		if err := CheckBody(compress.Codecs.Zstd, c.frame, 10); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}

	big := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xc0, 0x00, 0, 0, 0, 0, 15, 0, 0, 0, 0x01, 0x00, 0x00}
	for name, b := range map[string][]byte{
		"empty":                  nil,
		"magic only":             big[:4],
		"content size cut short": big[:9],
		"skippable frame":        {0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 1, 2, 3, 4},
		"not zstd":               []byte("PAR1 and more bytes"),
	} {
		if got, ok := zstdContentSize(b); ok {
			t.Errorf("%s: content size %d, want none", name, got)
		}
	}
}
