package transform

import (
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"os"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shmloader/shmloader/internal/testkit"
	"github.com/shmloader/shmloader/producer/config"
)

// TestFNVKnown checks the core against published FNV-1a-64 values and the standard
// library.
func TestFNVKnown(t *testing.T) {
	known := map[string]uint64{"": 0xcbf29ce484222325, "a": 0xaf63dc4c8601ec8c, "foobar": 0x85944171f73967e8}
	for s, want := range known {
		if got := fnvString(fnvOffset, s); got != want {
			t.Errorf("fnv1a64(%q) = %#x, want %#x", s, got, want)
		}
	}
	// Seed 0 then the string "a", by hand: eight zero bytes, then 'a'.
	h := uint64(fnvOffset)
	for range 8 {
		h *= fnvPrime
	}
	h = (h ^ 'a') * fnvPrime
	if got := fnvString(fnvSeed(0), "a"); got != h {
		t.Errorf("seeded fnv = %#x, by hand %#x", got, h)
	}
}

func stdHash(seed uint64, value []byte) uint64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	h.Write(value)
	return h.Sum64()
}

type hashVector struct {
	Kind    string          `json:"kind"`
	Value   json.RawMessage `json:"value"`
	Seed    uint64          `json:"seed"`
	Buckets uint64          `json:"buckets"`
	Hash    string          `json:"hash"`
	Bucket  uint64          `json:"bucket"`
}

// TestHashVectors runs testdata/hash_vectors.json (shared with the Python tests) through
// the standard library's FNV-1a and through Apply on a one-row column.
func TestHashVectors(t *testing.T) {
	raw, err := os.ReadFile("testdata/hash_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct{ Vectors []hashVector }
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Vectors) < 20 {
		t.Fatalf("%d vectors", len(file.Vectors))
	}
	for i, v := range file.Vectors {
		want, err := strconv.ParseUint(v.Hash, 0, 64)
		if err != nil {
			t.Fatal(err)
		}
		var value []byte
		var c col
		switch v.Kind {
		case "string":
			var s string
			if err := json.Unmarshal(v.Value, &s); err != nil {
				t.Fatal(err)
			}
			value, c = []byte(s), mk("s", arrow.BinaryTypes.String, []any{s})
		case "int":
			var n int64
			if err := json.Unmarshal(v.Value, &n); err != nil {
				t.Fatal(err)
			}
			value = binary.LittleEndian.AppendUint64(nil, uint64(n))
			c = mk("n", arrow.PrimitiveTypes.Int64, []any{int(n)})
		}
		if got := stdHash(v.Seed, value); got != want || want%v.Buckets != v.Bucket {
			t.Fatalf("vector %d: hash/fnv gives %#x (bucket %d), file says %#x (bucket %d)", i, got, got%v.Buckets, want, v.Bucket)
		}
		_, dst := run(t, steps(config.Transform{Op: config.OpHashBucket, Buckets: v.Buckets, HashSeed: v.Seed}), nil, c)
		if got := uint64(testkit.Int64s(dst[0])[0]); got != v.Bucket {
			t.Errorf("vector %d (%s %s seed %d): bucket %d, want %d", i, v.Kind, v.Value, v.Seed, got, v.Bucket)
		}
	}
}

// TestHashColumns: ints of every width, bools and strings hash their value as int64
// (or their bytes); nulls stay null (0) unless filled first.
func TestHashColumns(t *testing.T) {
	const seed, buckets = 7, 1000
	hi := func(v int64) int64 {
		return int64(stdHash(seed, binary.LittleEndian.AppendUint64(nil, uint64(v))) % buckets)
	}
	hs := func(s string) int64 { return int64(stdHash(seed, []byte(s)) % buckets) }
	hb := config.Transform{Op: config.OpHashBucket, Buckets: buckets, HashSeed: seed}
	for _, typ := range []arrow.DataType{arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64} {
		_, dst := run(t, steps(hb), nil, mk("n", typ, []any{-1, 0, nil, 100}))
		testkit.SameInts(t, typ.String(), testkit.Int64s(dst[0]), []int64{hi(-1), hi(0), 0, hi(100)})
	}
	_, dst := run(t, steps(hb), nil, mk("u", arrow.PrimitiveTypes.Uint64, []any{uint64(1<<64 - 1), 3}))
	testkit.SameInts(t, "uint64", testkit.Int64s(dst[0]), []int64{hi(-1), hi(3)})
	_, dst = run(t, steps(hb), nil, mk("b", arrow.FixedWidthTypes.Boolean, []any{true, false}))
	testkit.SameInts(t, "bool", testkit.Int64s(dst[0]), []int64{hi(1), hi(0)})
	for _, typ := range []arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString, arrow.BinaryTypes.Binary} {
		vals := []any{"", "a", nil, "é"}
		_, dst = run(t, steps(hb), nil, mk("s", typ, vals))
		testkit.SameInts(t, typ.String(), testkit.Int64s(dst[0]), []int64{hs(""), hs("a"), 0, hs("é")})
		fill := config.Transform{Op: config.OpFillNull, Fill: config.Scalar{Str: "?", IsStr: true}}
		_, dst = run(t, steps(fill, hb), []int32{1, 2}, mk("s", typ, vals[:2], vals[2:]))
		testkit.SameInts(t, typ.String()+" filled", testkit.Int64s(dst[0]), []int64{hs("a"), hs("?")})
	}
	// Hash, then fill the nulls left after it; a float cast to int first.
	fill := config.Transform{Op: config.OpFillNull, Fill: config.Scalar{Num: -1}}
	_, dst = run(t, steps(hb, fill), nil, mk("s", arrow.BinaryTypes.String, []any{nil, "x"}))
	testkit.SameInts(t, "fill after", testkit.Int64s(dst[0]), []int64{-1, hs("x")})
	cast := config.Transform{Op: config.OpCast, DType: "int64"}
	o := steps(cast, hb)
	o.DType = "int32"
	_, dst = run(t, o, nil, mk("f", arrow.PrimitiveTypes.Float64, []any{2.9, -2.9}))
	testkit.SameInts(t, "cast then hash", ints32(dst[0]), []int64{hi(2), hi(-2)})
}
