package cache

import (
	"maps"
	"testing"
)

// seedHeader is a valid header page for sizes, and the entry file's size.
func seedHeader(sizes ...int64) ([]byte, int64) {
	lay, _ := planLayout(sizes)
	h := header{key: key(1), rows: 5, config: "cfg", label: "part-0 rg 1", lay: lay, crc: 0xdeadbeef}
	page := make([]byte, headerSize)
	h.encode(page)
	return page, lay.size
}

// headerPage builds a page from the fuzzer's two small inputs: the fields and table from
// offset 0, the meta strings at offStrings. Small inputs keep minimization quick; a
// fields input alone (strs nil) stands for a short read.
func headerPage(fields, strs []byte) []byte {
	if strs == nil {
		return fields
	}
	page := make([]byte, headerSize)
	copy(page, fields[:min(len(fields), offStrings)])
	copy(page[offStrings:], strs)
	return page
}

// addHeaderSeed adds a header page as the fuzzer's inputs.
func addHeaderSeed(f *testing.F, page []byte, size int64) {
	n := uint32(page[offCount]) | uint32(page[offCount+1])<<8
	f.Add(page[:offTable+16*min(int(n), maxTensors)], page[offStrings:offStrings+maxConfigLen], size)
}

// FuzzEntryHeader: no bytes make parseHeader panic, and whatever it accepts has every
// region aligned, in order and inside the file, and survives encoding unchanged.
// Seeds: testdata/fuzz/FuzzEntryHeader and the f.Add calls.
func FuzzEntryHeader(f *testing.F) {
	for _, sizes := range [][]int64{nil, {0}, {1000, 0, 333}, {1 << 30}} {
		page, size := seedHeader(sizes...)
		addHeaderSeed(f, page, size)
		addHeaderSeed(f, page, size-1)
		f.Add(page[:100], []byte(nil), size)
	}
	f.Fuzz(func(t *testing.T, fields, strs []byte, size int64) {
		h, err := parseHeader(headerPage(fields, strs), size)
		if err != nil {
			return
		}
		end := int64(headerSize)
		for i, off := range h.lay.offs {
			if off%align != 0 || off < end || off+h.lay.lens[i] > size {
				t.Fatalf("region %d at %d+%d in a file of %d", i, off, h.lay.lens[i], size)
			}
			end = off + h.lay.lens[i]
		}
		again := make([]byte, headerSize)
		h.encode(again)
		h2, err := parseHeader(again, size)
		if err != nil || h2.key != h.key || h2.rows != h.rows || h2.crc != h.crc ||
			h2.config != h.config || h2.label != h.label || h2.lay.size != h.lay.size {
			t.Fatalf("re-encoded header: %+v, %v; was %+v", h2, err, h)
		}
	})
}

// seedManifest is a valid manifest file with entries and a reservation.
func seedManifest() []byte {
	m := newManifest()
	m.gen = 42
	for i := range 3 {
		m.entries[key(i)] = rec{size: 8192, rows: int64(i), config: "cfg", label: "rg", created: 1}
	}
	m.pending[tempName(key(9), 1, 8192)] = pend{key: key(9), size: 8192}
	b, _ := encodeManifest(m)
	return b
}

// FuzzManifest: no bytes make parseManifest panic, and whatever it accepts encodes back
// to a manifest that parses the same.
func FuzzManifest(f *testing.F) {
	good := seedManifest()
	f.Add(good)
	f.Add(good[:manifestHdr])
	empty, _ := encodeManifest(newManifest())
	f.Add(empty)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseManifest(b)
		if err != nil {
			return
		}
		again, err := encodeManifest(m)
		if err != nil {
			t.Fatal(err)
		}
		m2, err := parseManifest(again)
		if err != nil || m2.gen != m.gen || !maps.Equal(m2.entries, m.entries) || !maps.Equal(m2.pending, m.pending) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// FuzzManifestBody feeds bytes straight to the body decoder, past the CRC that guards it
// in use: it must reject or accept without panicking or allocating by a length prefix.
func FuzzManifestBody(f *testing.F) {
	f.Add(seedManifest()[manifestHdr:])
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff})                        // array32 of 4G records
	f.Add([]byte{0x91, 0x81, 0xa1, 'k', 0xc6, 0xff, 0xff, 0xff, 0xff}) // key as bin32 of 4 GiB
	f.Add([]byte{0x90, 0x90})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeBody(b)
		if err != nil {
			return
		}
		for _, r := range m.entries {
			if r.size < headerSize || r.size > maxEntrySize || r.rows < 0 {
				t.Fatalf("accepted record %+v", r)
			}
		}
	})
}
