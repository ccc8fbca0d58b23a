package pages

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/pierrec/lz4/v4"
)

// lz4Data is n bytes that compress somewhat: runs of a few symbols between random bytes.
func lz4Data(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		if i%64 < 40 {
			b[i] = "abcd"[r.IntN(4)]
		} else {
			b[i] = byte(r.Uint32())
		}
	}
	return b
}

func rawBlock(t testing.TB, b []byte) []byte {
	t.Helper()
	out := make([]byte, lz4.CompressBlockBound(len(b)))
	n, err := lz4.CompressBlock(b, out, nil)
	if err != nil || n == 0 {
		t.Fatalf("compressing %d bytes: %d, %v", len(b), n, err)
	}
	return out[:n]
}

// hadoopBody frames each part as one Hadoop block, written here by hand rather than by
// the codec under test.
func hadoopBody(t testing.TB, parts ...[]byte) []byte {
	t.Helper()
	var body []byte
	for _, p := range parts {
		c := rawBlock(t, p)
		body = binary.BigEndian.AppendUint32(body, uint32(len(p)))
		body = binary.BigEndian.AppendUint32(body, uint32(len(c)))
		body = append(body, c...)
	}
	return body
}

func frameOf(t testing.TB, b []byte, opts ...lz4.Option) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	if err := w.Apply(opts...); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// blockSizes walks a Hadoop-framed body and returns each block's decompressed size.
func blockSizes(t *testing.T, body []byte) []int {
	t.Helper()
	var sizes []int
	for len(body) > 0 {
		if len(body) < lz4Prefix {
			t.Fatalf("%d bytes after the last block", len(body))
		}
		c := int(binary.BigEndian.Uint32(body[4:]))
		sizes = append(sizes, int(binary.BigEndian.Uint32(body)))
		body = body[lz4Prefix+c:]
	}
	return sizes
}

func TestLZ4HadoopRoundTrip(t *testing.T) {
	RegisterCodecs()
	codec, err := compress.GetCodec(compress.Codecs.Lz4)
	if err != nil {
		t.Fatal(err)
	}
	const B = lz4HadoopBlock
	for _, n := range []int{0, 1, 13, 4096, B - 1, B, B + 1, 3*B + 17} {
		data := lz4Data(n, uint64(n))
		enc := codec.Encode(nil, data)
		if bound := codec.CompressBound(int64(n)); int64(len(enc)) > bound {
			t.Errorf("%d bytes: encoded to %d, over the bound %d", n, len(enc), bound)
		}
		// Blocks of B input bytes, the last one shorter; at least one block.
		var want []int
		for left := n; left > 0 || len(want) == 0; left -= min(left, B) {
			want = append(want, min(left, B))
		}
		if got := blockSizes(t, enc); !slices.Equal(got, want) {
			t.Errorf("%d bytes: blocks of %v, want %v", n, got, want)
		}
		dec, err := compress.Decode(codec, make([]byte, n), enc)
		if err != nil || !bytes.Equal(dec, data) {
			t.Errorf("%d bytes: through arrow-go's compress.Decode: %v, equal %v", n, err, bytes.Equal(dec, data))
		}
		dec, err = DecodeLZ4Hadoop(nil, enc, n)
		if err != nil || !bytes.Equal(dec, data) {
			t.Errorf("%d bytes: DecodeLZ4Hadoop into nil: %v", n, err)
		}
	}
}

// Pages of several blocks of any sizes, empty blocks among them, as other writers frame
// them.
func TestLZ4HadoopSeveralBlocks(t *testing.T) {
	parts := [][]byte{lz4Data(100, 1), {}, lz4Data(70000, 2), lz4Data(5, 3), lz4Data(300000, 4)}
	body := hadoopBody(t, parts...)
	want := bytes.Join(parts, nil)
	got, err := DecodeLZ4Hadoop(make([]byte, 0, len(want)), body, len(want))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%v, equal %v", err, bytes.Equal(got, want))
	}
}

// Raw blocks (parquet-cpp before Arrow 2.0) and LZ4 frames are read too.
func TestLZ4Fallbacks(t *testing.T) {
	small, big, random := lz4Data(1000, 5), lz4Data(300000, 6), make([]byte, 200000)
	r := rand.New(rand.NewPCG(7, 7))
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	cases := []struct {
		name string
		data []byte
		body []byte
	}{
		{"raw block", small, rawBlock(t, small)},
		{"raw block, large", big, rawBlock(t, big)},
		{"raw block, incompressible", random, rawBlock(t, random)},
		{"frame", small, frameOf(t, small)},
		{"frame, no checksums", big, frameOf(t, big, lz4.ChecksumOption(false))},
		{"frame, block checksums, 64 KiB blocks", big, frameOf(t, big, lz4.BlockChecksumOption(true), lz4.BlockSizeOption(lz4.Block64Kb))},
		{"frame, content size", small, frameOf(t, small, lz4.SizeOption(uint64(len(small))))},
		{"frame, incompressible", random, frameOf(t, random, lz4.BlockSizeOption(lz4.Block64Kb))},
		{"frame, empty", nil, frameOf(t, nil)},
	}
	for _, c := range cases {
		got, err := DecodeLZ4Hadoop(make([]byte, 0, len(c.data)), c.body, len(c.data))
		if err != nil || !bytes.Equal(got, c.data) {
			t.Errorf("%s: %v, equal %v", c.name, err, bytes.Equal(got, c.data))
		}
	}
}

func TestLZ4CorruptIsAnError(t *testing.T) {
	data := lz4Data(5000, 8)
	good := hadoopBody(t, data[:3000], data[3000:])
	patch := func(at int, v uint32) []byte {
		b := bytes.Clone(good)
		binary.BigEndian.PutUint32(b[at:], v)
		return b
	}
	frame := frameOf(t, data, lz4.BlockChecksumOption(true))
	second := lz4Prefix + int(binary.BigEndian.Uint32(good[4:])) // the second block's prefix
	cases := []struct {
		name string
		body []byte
		n    int
		want string
	}{
		{"one byte short", good[:len(good)-1], 5000, "runs past the"},
		{"no second block", good[:second], 5000, "blocks hold 3000 bytes, the page 5000"},
		{"half a prefix left", good[:second+5], 5000, "5 bytes after the last block"},
		{"trailing byte", append(bytes.Clone(good), 0), 5000, "1 bytes after the last block"},
		{"compressed size too large", patch(4, 1<<31), 5000, "compressed size 2147483648 runs past"},
		{"compressed size too small", patch(4, 100), 5000, "block 0 at byte 0"},
		{"decompressed size too large", patch(0, 4000), 5000, "decodes to 3000 bytes, its prefix says 4000"},
		{"decompressed size past the page", patch(second, 1<<30), 5000, "decompressed size 1073741824 exceeds the 2000 bytes left"},
		{"page smaller than the blocks", good, 4999, "exceeds the 1999 bytes left"},
		{"page larger than the blocks", good, 5001, "blocks hold 5000 bytes, the page 5001"},
		{"empty body", nil, 10, "blocks hold 0 bytes, the page 10"},
		{"empty block without its token", make([]byte, 8), 0, "corrupt raw block"},
		{"garbage", []byte("not lz4 at all, not even close"), 30, "not an LZ4 frame (no frame magic)"},
		{"raw block, wrong size", rawBlock(t, data), 4000, "not a raw LZ4 block (corrupt"},
		{"raw block, short", rawBlock(t, data), 6000, "not a raw LZ4 block (decodes to 5000 bytes)"},
		{"frame, wrong size", frame, 4000, "not an LZ4 frame (holds"},
		{"frame, short", frame, 6000, "holds 5000 bytes, not 6000"},
		{"frame, trailing byte", append(bytes.Clone(frame), 0), 5000, "1 bytes follow the"},
		{"two frames", append(bytes.Clone(frame), frame...), 10000, "bytes follow the"},
		{"frame cut short", frame[:len(frame)-3], 5000, "cut short"},
		{"frame, corrupt block checksum", flipAt(frame, len(frame)-9), 5000, "not an LZ4 frame"},
		{"negative size", good, -1, "uncompressed size -1"},
	}
	for _, c := range cases {
		got, err := DecodeLZ4Hadoop(nil, c.body, c.n)
		if err == nil {
			t.Errorf("%s: no error, %d bytes", c.name, len(got))
			continue
		}
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant ErrCorrupt saying %q", c.name, err, c.want)
		}
	}
}

func flipAt(b []byte, i int) []byte {
	b = bytes.Clone(b)
	b[i] ^= 0x10
	return b
}

// Whatever the cut, a truncated page is an error, never a short or padded one.
func TestLZ4TruncatedIsAnError(t *testing.T) {
	data := lz4Data(2*lz4HadoopBlock+1000, 9)
	body := LZ4HadoopCodec{}.Encode(nil, data)
	dst := make([]byte, 0, len(data))
	for cut := 0; cut < len(body); cut += 1 + cut%997 {
		if _, err := DecodeLZ4Hadoop(dst, body[:cut], len(data)); err == nil {
			t.Fatalf("%d of %d bytes decoded without error", cut, len(body))
		}
	}
}

// Decoding into a buffer large enough allocates nothing, for the framings writers use.
func TestLZ4DecodeAllocs(t *testing.T) {
	data := lz4Data(100000, 10)
	dst := make([]byte, 0, len(data))
	for name, body := range map[string][]byte{
		"hadoop":    LZ4HadoopCodec{}.Encode(nil, data),
		"raw block": rawBlock(t, data),
	} {
		allocs := testing.AllocsPerRun(20, func() {
			if _, err := DecodeLZ4Hadoop(dst, body, len(data)); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per decode", name, allocs)
		}
	}
}

// FuzzLZ4Hadoop: no body, whatever its size, panics or decodes to other than the size
// asked; and any bytes survive Encode and decoding. Seeds, in testdata/fuzz/FuzzLZ4Hadoop:
// Hadoop bodies of one and two blocks, a raw block, frames, and damaged ones of each.
func FuzzLZ4Hadoop(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte, size uint32) {
		n := int(size % (1 << 18))
		out, err := DecodeLZ4Hadoop(nil, body, n)
		if err == nil && len(out) != n {
			t.Fatalf("decoded %d bytes, asked %d", len(out), n)
		}
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error without ErrCorrupt: %v", err)
		}
		enc := LZ4HadoopCodec{}.Encode(nil, body)
		dec, err := DecodeLZ4Hadoop(nil, enc, len(body))
		if err != nil || !bytes.Equal(dec, body) {
			t.Fatalf("round trip of %d bytes: %v", len(body), err)
		}
	})
}
