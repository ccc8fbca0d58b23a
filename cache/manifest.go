package cache

import (
	"encoding/binary"
	"hash/crc32"
)

// A manifest file is a 32-byte wrapper, then a msgpack body (doc.go has the diagram).
// The body is decoded only after the wrapper's length and CRC-32C match: msgpack v5.4
// sizes slices from the untrusted length prefix (issue #401). decodeBody also never lets
// msgpack allocate a slice itself, so even bytes that pass the CRC by accident are safe.
const (
	manifestMagic   = "SHMLCMAN"
	manifestHdr     = 32
	offMCRC, offGen = 12, 16
	offMLen         = 24
	maxManifestBody = 64 << 20
	maxRecords      = 1 << 20
)

// rec is one committed entry of a shard.
type rec struct {
	size, rows    int64
	config, label string
	created       int64 // unix ns of the commit: LRU age for entries this process never used
}

// pend is one write in flight: its temp file and the bytes it reserves in the budget.
type pend struct {
	key  Key
	size int64
}

// manifest is a shard's index: committed entries and reservations of writes in flight.
type manifest struct {
	gen     uint64          // changes on every write; readers compare it to notice changes
	entries map[Key]rec     //
	pending map[string]pend // by temp file name
}

func newManifest() *manifest {
	return &manifest{entries: map[Key]rec{}, pending: map[string]pend{}}
}

// used is the bytes the shard's budget is charged: entries plus reservations.
func (m *manifest) used() (n int64) {
	for _, r := range m.entries {
		n += r.size
	}
	for _, p := range m.pending {
		n += p.size
	}
	return n
}

// encodeManifest writes m as a whole manifest file: wrapper, then body.
func encodeManifest(m *manifest) ([]byte, error) {
	body, err := encodeBody(m)
	if err != nil {
		return nil, err
	}
	if len(body) > maxManifestBody {
		return nil, kindf(ErrBadSize, "manifest body of %d bytes, at most %d", len(body), maxManifestBody)
	}
	out := make([]byte, manifestHdr+len(body))
	le := binary.LittleEndian
	copy(out, manifestMagic)
	le.PutUint32(out[8:], FormatVersion)
	le.PutUint64(out[offGen:], m.gen)
	le.PutUint64(out[offMLen:], uint64(len(body)))
	copy(out[manifestHdr:], body)
	le.PutUint32(out[offMCRC:], manifestCRC(out))
	return out, nil
}

// manifestCRC is the CRC-32C of the whole file with its CRC field zeroed.
func manifestCRC(b []byte) uint32 {
	var zero [4]byte
	c := crc32.Update(0, castagnoli, b[:offMCRC])
	c = crc32.Update(c, castagnoli, zero[:])
	return crc32.Update(c, castagnoli, b[offMCRC+4:])
}

// parseManifest validates the wrapper of a whole manifest file, then decodes its body.
func parseManifest(b []byte) (*manifest, error) {
	le := binary.LittleEndian
	if len(b) < manifestHdr {
		return nil, kindf(ErrBadSize, "manifest of %d bytes, shorter than its %d-byte header", len(b), manifestHdr)
	}
	if string(b[:8]) != manifestMagic {
		return nil, kindf(ErrBadMagic, "magic %q, want %q", b[:8], manifestMagic)
	}
	if v := le.Uint32(b[8:]); v != FormatVersion {
		// Inside a dir of this format this is damage, not a newer writer: the dir's
		// info file gates the format.
		return nil, kindf(ErrBadRecord, "manifest format version %d, want %d", v, FormatVersion)
	}
	if n := le.Uint64(b[offMLen:]); n > maxManifestBody || n != uint64(len(b)-manifestHdr) {
		return nil, kindf(ErrBadSize, "manifest body length %d, file holds %d", n, len(b)-manifestHdr)
	}
	if got, want := manifestCRC(b), le.Uint32(b[offMCRC:]); got != want {
		return nil, kindf(ErrChecksum, "manifest CRC-32C %08x, header says %08x", got, want)
	}
	m, err := decodeBody(b[manifestHdr:])
	if err != nil {
		return nil, err
	}
	m.gen = le.Uint64(b[offGen:])
	return m, nil
}
