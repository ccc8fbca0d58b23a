package pages

import (
	"encoding/binary"
	"math/bits"
)

// Encoders of the value encodings, written from the spec, for the tests' hand-made
// sections: block sizes and unset widths that arrow-go never writes, and broken inputs.

// deltaOpts shapes an encoded DELTA_BINARY_PACKED stream.
type deltaOpts struct {
	block, minis int  // values per block, miniblocks per block (0: 128 and 4)
	w32          bool // deltas wrap in 32 bits, as an INT32 writer's do
	unused       byte // the width written for a last block's miniblocks without values
}

// encDeltaInts encodes vals in DELTA_BINARY_PACKED.
func encDeltaInts(vals []int64, o deltaOpts) []byte {
	if o.block == 0 {
		o.block, o.minis = 128, 4
	}
	b := binary.AppendUvarint(nil, uint64(o.block))
	b = binary.AppendUvarint(b, uint64(o.minis))
	b = binary.AppendUvarint(b, uint64(len(vals)))
	first := int64(0)
	if len(vals) > 0 {
		first = vals[0]
	}
	b = binary.AppendVarint(b, first)
	deltas := make([]int64, 0, len(vals))
	for i := 1; i < len(vals); i++ {
		d := vals[i] - vals[i-1]
		if o.w32 {
			d = int64(int32(vals[i]) - int32(vals[i-1]))
		}
		deltas = append(deltas, d)
	}
	per := o.block / o.minis
	for len(deltas) > 0 {
		blk := deltas[:min(o.block, len(deltas))]
		deltas = deltas[len(blk):]
		minD := blk[0]
		for _, d := range blk {
			minD = min(minD, d)
		}
		b = binary.AppendVarint(b, minD)
		widths := len(b)
		for range o.minis {
			b = append(b, o.unused)
		}
		for m := 0; m*per < len(blk); m++ {
			mb := blk[m*per : min((m+1)*per, len(blk))]
			w := 0
			for _, d := range mb {
				w = max(w, bits.Len64(uint64(d-minD)))
			}
			b[widths+m] = byte(w)
			packed := make([]byte, per*w/8)
			for k, d := range mb {
				putBits(packed, k*w, w, uint64(d-minD))
			}
			b = append(b, packed...)
		}
	}
	return b
}

// putBits writes the w low bits of v at bit offset bit of b, least significant first.
func putBits(b []byte, bit, w int, v uint64) {
	for i := range w {
		if v>>i&1 == 1 {
			b[(bit+i)/8] |= 1 << ((bit + i) % 8)
		}
	}
}

// encDeltaLength encodes vals in DELTA_LENGTH_BYTE_ARRAY.
func encDeltaLength(vals [][]byte) []byte {
	lens := make([]int64, len(vals))
	for i, v := range vals {
		lens[i] = int64(len(v))
	}
	b := encDeltaInts(lens, deltaOpts{w32: true})
	for _, v := range vals {
		b = append(b, v...)
	}
	return b
}

// encDeltaBytes encodes vals in DELTA_BYTE_ARRAY.
func encDeltaBytes(vals [][]byte) []byte {
	pre := make([]int64, len(vals))
	suf := make([][]byte, len(vals))
	var prev []byte
	for i, v := range vals {
		p := 0
		for p < len(v) && p < len(prev) && v[p] == prev[p] {
			p++
		}
		pre[i], suf[i], prev = int64(p), v[p:], v
	}
	return append(encDeltaInts(pre, deltaOpts{w32: true}), encDeltaLength(suf)...)
}

// encSplit encodes values of w bytes each, back to back in plain, in BYTE_STREAM_SPLIT.
func encSplit(plain []byte, w int) []byte {
	n := len(plain) / w
	b := make([]byte, len(plain))
	for i := range n {
		for j := range w {
			b[j*n+i] = plain[i*w+j]
		}
	}
	return b
}
