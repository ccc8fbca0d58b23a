package cache

import (
	"bytes"
	"maps"
	"slices"

	"github.com/vmihailenco/msgpack/v5"
)

// The wire forms; field names are short because a shard may list thousands of entries.
// Keys are strings, not []byte: msgpack v5.4 sizes a []byte from its length prefix
// before reading it, but grows a string as its bytes arrive.
type wireRec struct {
	Key     string `msgpack:"k"`
	Size    int64  `msgpack:"s"`
	Rows    int64  `msgpack:"r"`
	Config  string `msgpack:"c"`
	Label   string `msgpack:"l"`
	Created int64  `msgpack:"t"`
}

type wirePend struct {
	Temp string `msgpack:"f"`
	Key  string `msgpack:"k"`
	Size int64  `msgpack:"s"`
}

// encodeBody writes m's records in sorted order, so equal manifests give equal bytes.
func encodeBody(m *manifest) ([]byte, error) {
	var body bytes.Buffer
	enc := msgpack.NewEncoder(&body)
	keys := slices.SortedFunc(maps.Keys(m.entries), func(a, b Key) int { return bytes.Compare(a[:], b[:]) })
	if err := enc.EncodeArrayLen(len(keys)); err != nil {
		return nil, err
	}
	for _, k := range keys {
		r := m.entries[k]
		w := wireRec{Key: string(k[:]), Size: r.size, Rows: r.rows, Config: r.config, Label: r.label, Created: r.created}
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
		if err := enc.Encode(&wirePend{Temp: t, Key: string(p.key[:]), Size: p.size}); err != nil {
			return nil, err
		}
	}
	return body.Bytes(), nil
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
		if !ok || string(k[:]) != w.Key || size != w.Size || size < headerSize || size > maxEntrySize {
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
