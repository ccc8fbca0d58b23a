package ring

import (
	"encoding/binary"
	"errors"
	"testing"
	"unsafe"
)

// image returns a freshly produced segment image in 8-byte-aligned memory.
func image(t testing.TB, s Spec) []byte {
	t.Helper()
	g, err := s.Layout()
	if err != nil {
		t.Fatal(err)
	}
	mem := aligned(int(g.TotalSize))
	if _, err := NewProducer(mem, g); err != nil {
		t.Fatal(err)
	}
	return mem
}

func aligned(n int) []byte {
	words := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), n)
}

func put32(mem []byte, off int, v uint32) { binary.LittleEndian.PutUint32(mem[off:], v) }
func put64(mem []byte, off int, v uint64) { binary.LittleEndian.PutUint64(mem[off:], v) }

// Schema entry i starts at 512 + 128*i: name 0, dtype 48, ndim 52, shape 56, offset 88,
// row_bytes 96, nbytes 104 (PROTOCOL.md).
func entry(i, field int) int { return SchemaOffset + TensorEntry*i + field }

func TestValidateGivesADistinctErrorPerFailure(t *testing.T) {
	spec := testSpec("v", 4, 8)
	cases := []struct {
		name   string
		job    string
		rank   int
		mutate func(m []byte) []byte
		want   error
	}{
		{"valid", "v", 0, nil, nil},
		{"magic", "v", 0, func(m []byte) []byte { m[0] = 'X'; return m }, ErrMagic},
		{"version 2 (before steps per epoch and counters)", "v", 0, func(m []byte) []byte { put32(m, 8, 2); return m }, ErrVersion},
		{"version 3 (before stop reasons and stall notes)", "v", 0, func(m []byte) []byte { put32(m, 8, 3); return m }, ErrVersion},
		{"version 4 (before the plan version)", "v", 0, func(m []byte) []byte { put32(m, 8, 4); return m }, ErrVersion},
		{"version 6", "v", 0, func(m []byte) []byte { put32(m, 8, 6); return m }, ErrVersion},
		{"version 0 (not ready)", "v", 0, func(m []byte) []byte { put32(m, 8, 0); return m }, ErrNotReady},
		{"header only", "v", 0, func(m []byte) []byte { return m[:100] }, ErrSize},
		{"truncated file", "v", 0, func(m []byte) []byte { return m[:len(m)-PageSize] }, ErrSize},
		{"slot_count 1", "v", 0, func(m []byte) []byte { put32(m, 32, 1); return m }, ErrSize},
		{"schema_count 0", "v", 0, func(m []byte) []byte { put32(m, 36, 0); return m }, ErrSize},
		{"schema_count 300", "v", 0, func(m []byte) []byte { put32(m, 36, 300); return m }, ErrSize},
		{"header_size odd", "v", 0, func(m []byte) []byte { put32(m, 12, PageSize+8); return m }, ErrSize},
		{"slot_size huge", "v", 0, func(m []byte) []byte { put64(m, 24, 1<<62); return m }, ErrSize},
		{"rank >= ranks", "v", 0, func(m []byte) []byte { put32(m, 44, 3); return m }, ErrSize},
		{"capacity 0", "v", 0, func(m []byte) []byte { put32(m, 64, 0); return m }, ErrSize},
		{"nodes 0", "v", 0, func(m []byte) []byte { put32(m, 424, 0); return m }, ErrSize},
		{"node_rank >= nodes", "v", 0, func(m []byte) []byte { put32(m, 428, 1); return m }, ErrSize},
		{"other job", "w", 0, nil, ErrCorrupt},
		{"other rank", "v", 1, nil, ErrCorrupt},
		{"job padding", "v", 0, func(m []byte) []byte { m[80+10] = 'x'; return m }, ErrCorrupt},
		{"dtype 99", "v", 0, func(m []byte) []byte { put32(m, entry(0, 48), 99); return m }, ErrSchema},
		{"ndim 5", "v", 0, func(m []byte) []byte { put32(m, entry(0, 52), 5); return m }, ErrSchema},
		{"shape beyond ndim", "v", 0, func(m []byte) []byte { put64(m, entry(0, 64), 2); return m }, ErrSchema},
		{"name unterminated", "v", 0, func(m []byte) []byte {
			copy(m[entry(0, 0):entry(0, 48)], make48('a'))
			return m
		}, ErrSchema},
		{"name empty", "v", 0, func(m []byte) []byte { m[entry(0, 0)] = 0; return m }, ErrSchema},
		{"name bad char", "v", 0, func(m []byte) []byte { m[entry(0, 0)] = ' '; return m }, ErrSchema},
		{"duplicate name", "v", 0, func(m []byte) []byte { copy(m[entry(1, 0):entry(1, 48)], m[entry(0, 0):entry(0, 48)]); return m }, ErrSchema},
		{"row_bytes mismatch", "v", 0, func(m []byte) []byte { put64(m, entry(0, 96), 4); return m }, ErrSchema},
		{"nbytes mismatch", "v", 0, func(m []byte) []byte { put64(m, entry(0, 104), 1); return m }, ErrSchema},
		{"reserved set", "v", 0, func(m []byte) []byte { m[entry(0, 120)] = 1; return m }, ErrSchema},
		{"offset past slot", "v", 0, func(m []byte) []byte { put64(m, entry(0, 88), PageSize); return m }, ErrOffset},
		{"offset unaligned", "v", 0, func(m []byte) []byte { put64(m, entry(0, 88), 264); return m }, ErrOffset},
		{"offset in slot header", "v", 0, func(m []byte) []byte { put64(m, entry(0, 88), 0); return m }, ErrOffset},
		{"offset wraps", "v", 0, func(m []byte) []byte { put64(m, entry(0, 88), ^uint64(63)); return m }, ErrOffset},
		{"overlap", "v", 0, func(m []byte) []byte {
			copy(m[entry(1, 88):entry(1, 96)], m[entry(0, 88):entry(0, 96)])
			return m
		}, ErrOffset},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := image(t, spec)
			if c.mutate != nil {
				m = c.mutate(m)
			}
			g, err := Validate(m, c.job, c.rank)
			if c.want == nil {
				if err != nil || g == nil || len(g.Tensors) != 2 {
					t.Fatalf("valid image: %v", err)
				}
				return
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("want %v, got %v", c.want, err)
			}
			for _, other := range []error{ErrMagic, ErrVersion, ErrNotReady, ErrSize, ErrCorrupt, ErrSchema, ErrOffset} {
				if other != c.want && errors.Is(err, other) {
					t.Fatalf("error %v also matches %v: errors must be distinct", err, other)
				}
			}
		})
	}
}

func make48(c byte) []byte {
	b := make([]byte, 48)
	for i := range b {
		b[i] = c
	}
	return b
}

// FuzzValidateHeader: no input makes Validate panic or read out of bounds, and whatever
// it accepts describes tensors that lie inside their slots and slots inside the file.
func FuzzValidateHeader(f *testing.F) {
	f.Add(image(f, testSpec("fz", 2, 4)))
	f.Add(image(f, Spec{Job: "fz", Ranks: 2, Rank: 0, SlotCount: 3, BatchCapacity: 1,
		Tensors: []TensorSpec{{Name: "a", DType: Uint8, Shape: []int{1, 2, 3, 4}}, {Name: "b", DType: Float64}, {Name: "c/d:e", DType: Bool}}}))
	f.Add([]byte("SHMLRING"))
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := aligned(len(data))
		copy(mem, data)
		g, err := Validate(mem, "fz", 0)
		if err != nil {
			return
		}
		if g.HeaderSize+uint64(g.SlotCount)*g.SlotSize != uint64(len(mem)) {
			t.Fatalf("accepted geometry does not cover the file: %+v", g)
		}
		for _, tn := range g.Tensors {
			if tn.Offset < SlotHeaderSize || tn.Offset+tn.NBytes > g.SlotSize || tn.NBytes != tn.RowBytes*uint64(g.BatchCapacity) {
				t.Fatalf("accepted tensor outside its slot: %+v", tn)
			}
		}
	})
}

// FuzzSlotHeader: CheckSlot accepts only headers a consumer can trust.
func FuzzSlotHeader(f *testing.F) {
	f.Add(make([]byte, SlotHeaderSize), uint64(0))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0}, uint64(0))
	g := &Geometry{BatchCapacity: 8, SlotCount: 4}
	f.Fuzz(func(t *testing.T, data []byte, cursor uint64) {
		var sh SlotHeader
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&sh)), SlotHeaderSize), data)
		if g.CheckSlot(&sh, cursor) != nil {
			return
		}
		marker := sh.Flags & knownFlags
		if sh.Seq != cursor || sh.Rows > g.BatchCapacity || sh.Flags&^knownFlags != 0 || (marker != 0 && sh.Rows != 0) || marker == knownFlags {
			t.Fatalf("accepted bad slot header %+v at cursor %d", sh, cursor)
		}
	})
}
