package cache

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"maps"
	"slices"

	"github.com/vmihailenco/msgpack/v5"
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

// The wire forms; field names are short because a shard may list thousands of entries.
type wireRec struct {
	Key     []byte `msgpack:"k"`
	Size    int64  `msgpack:"s"`
	Rows    int64  `msgpack:"r"`
	Config  string `msgpack:"c"`
	Label   string `msgpack:"l"`
	Created int64  `msgpack:"t"`
}

type wirePend struct {
	Temp string `msgpack:"f"`
	Key  []byte `msgpack:"k"`
	Size int64  `msgpack:"s"`
}

// encodeManifest writes m in sorted order, so equal manifests give equal bytes.
func encodeManifest(m *manifest) ([]byte, error) {
	var body bytes.Buffer
	enc := msgpack.NewEncoder(&body)
	keys := slices.SortedFunc(maps.Keys(m.entries), func(a, b Key) int { return bytes.Compare(a[:], b[:]) })
	if err := enc.EncodeArrayLen(len(keys)); err != nil {
		return nil, err
	}
	for _, k := range keys {
		r := m.entries[k]
		w := wireRec{Key: k[:], Size: r.size, Rows: r.rows, Config: r.config, Label: r.label, Created: r.created}
		if err := enc.Encode(&w); err != nil {
			return nil, err
		}
	}
	temps := slices.Sorted(maps.Keys(m.pending))
	if err := enc.EncodeArrayLen(len(temps)); err != nil {
		return nil, err
	}
	for _, t := range temps {
		p := m.pending[t]
		if err := enc.Encode(&wirePend{Temp: t, Key: p.key[:], Size: p.size}); err != nil {
			return nil, err
		}
	}
	if body.Len() > maxManifestBody {
		return nil, kindf(ErrBadSize, "manifest body of %d bytes, at most %d", body.Len(), maxManifestBody)
	}
	out := make([]byte, manifestHdr+body.Len())
	le := binary.LittleEndian
	copy(out, manifestMagic)
	le.PutUint32(out[8:], FormatVersion)
	le.PutUint64(out[offGen:], m.gen)
	le.PutUint64(out[offMLen:], uint64(body.Len()))
	copy(out[manifestHdr:], body.Bytes())
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

// decodeBody reads the records of a body whose CRC matched, checking each.
func decodeBody(body []byte) (*manifest, error) {
	m := newManifest()
	d := msgpack.NewDecoder(bytes.NewReader(body))
	n, err := arrayLen(d, len(body))
	if err != nil {
		return nil, err
	}
	for range n {
		var w wireRec
		if err := d.Decode(&w); err != nil {
			return nil, kindf(ErrBadRecord, "manifest entry: %v", err)
		}
		k, err := checkRec(&w)
		if err != nil {
			return nil, err
		}
		if _, dup := m.entries[k]; dup {
			return nil, kindf(ErrBadRecord, "manifest lists %v twice", k)
		}
		m.entries[k] = rec{size: w.Size, rows: w.Rows, config: w.Config, label: w.Label, created: w.Created}
	}
	if n, err = arrayLen(d, len(body)); err != nil {
		return nil, err
	}
	for range n {
		var w wirePend
		if err := d.Decode(&w); err != nil {
			return nil, kindf(ErrBadRecord, "manifest reservation: %v", err)
		}
		k, _, size, ok := parseTemp(w.Temp)
		if !ok || !bytes.Equal(k[:], w.Key) || size != w.Size || size < headerSize || size > maxEntrySize {
			return nil, kindf(ErrBadRecord, "manifest reservation %q of %d bytes", clip(w.Temp, 100), w.Size)
		}
		m.pending[w.Temp] = pend{key: k, size: size}
	}
	if _, err := d.PeekCode(); err == nil {
		return nil, kindf(ErrBadRecord, "trailing bytes after the manifest")
	}
	return m, nil
}

// arrayLen reads an array header, capped by the bytes left: every element takes at least one.
func arrayLen(d *msgpack.Decoder, bodyLen int) (int, error) {
	n, err := d.DecodeArrayLen()
	if err != nil {
		return 0, kindf(ErrBadRecord, "manifest array: %v", err)
	}
	if n < 0 || n > bodyLen || n > maxRecords {
		return 0, kindf(ErrBadRecord, "manifest array of %d records", n)
	}
	return n, nil
}

func checkRec(w *wireRec) (Key, error) {
	var k Key
	if len(w.Key) != len(k) {
		return k, kindf(ErrBadRecord, "manifest key of %d bytes", len(w.Key))
	}
	copy(k[:], w.Key)
	if w.Size < headerSize || w.Size > maxEntrySize || w.Rows < 0 ||
		len(w.Config) > maxConfigLen || len(w.Label) > maxLabelLen {
		return k, kindf(ErrBadRecord, "manifest entry %v: size %d, rows %d", k, w.Size, w.Rows)
	}
	return k, nil
}
