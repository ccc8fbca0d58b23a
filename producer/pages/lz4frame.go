package pages

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/pierrec/lz4/v4"
)

// The LZ4 frame format (lz4's doc/lz4_Frame_format.md), as much of it as finding a
// frame's end needs: magic, FLG, BD, an optional 8-byte content size, an optional 4-byte
// dictionary ID, a header checksum byte; then blocks, each a little-endian uint32 size
// (high bit: stored uncompressed) and its bytes and, if FLG says so, a 4-byte checksum;
// a zero size ends them; then, if FLG says so, a 4-byte content checksum.
const (
	lz4FrameMagic      = 0x184D2204
	lz4FlagVersion     = 0xC0 // must be 01
	lz4FlagBlockSum    = 0x10
	lz4FlagContentSize = 0x08
	lz4FlagContentSum  = 0x04
	lz4FlagDictID      = 0x01
)

var errNoFrameMagic = errors.New("no frame magic")

// lz4Frame decodes src, which must be exactly one LZ4 frame, into dst, which it must
// fill exactly. pierrec/lz4 checks the header, block and content checksums; the walk
// over the blocks first makes sure that nothing follows the frame, which pierrec/lz4
// would read as more frames (liblz4's LZ4F_decompress, which Arrow C++ uses, stops after
// one).
func lz4Frame(dst, src []byte) (err error) {
	end, err := lz4FrameEnd(src)
	if err != nil {
		return err
	}
	if end != len(src) {
		return fmt.Errorf("%d bytes follow the %d-byte frame", len(src)-end, end)
	}
	defer func() { // a corrupt frame must not take the producer down
		if p := recover(); p != nil {
			err = fmt.Errorf("decoder panicked: %v", p)
		}
	}()
	zr := lz4.NewReader(bytes.NewReader(src))
	if n, err := io.ReadFull(zr, dst); err != nil {
		return fmt.Errorf("holds %d bytes, not %d (%v)", n, len(dst), err)
	}
	var more [1]byte
	if n, err := zr.Read(more[:]); n > 0 || err != io.EOF {
		if err == nil || err == io.EOF {
			return fmt.Errorf("holds more than %d bytes", len(dst))
		}
		return fmt.Errorf("after %d bytes: %v", len(dst), err)
	}
	return nil
}

// lz4FrameEnd returns the length of the frame at the start of b.
func lz4FrameEnd(b []byte) (int, error) {
	if len(b) < 7 || binary.LittleEndian.Uint32(b) != lz4FrameMagic {
		return 0, errNoFrameMagic
	}
	flg := b[4]
	if flg&lz4FlagVersion != 0x40 {
		return 0, fmt.Errorf("frame version %d", flg>>6)
	}
	if flg&lz4FlagDictID != 0 {
		return 0, errors.New("frame needs a dictionary")
	}
	pos := 7 // magic, FLG, BD, header checksum
	if flg&lz4FlagContentSize != 0 {
		pos += 8
	}
	for block := 0; ; block++ {
		if len(b)-pos < 4 {
			return 0, fmt.Errorf("frame cut short before block %d at byte %d", block, pos)
		}
		size := binary.LittleEndian.Uint32(b[pos:])
		pos += 4
		if size == 0 {
			break
		}
		n := uint64(size &^ (1 << 31))
		if flg&lz4FlagBlockSum != 0 {
			n += 4
		}
		if n > uint64(len(b)-pos) {
			return 0, fmt.Errorf("frame block %d at byte %d: %d bytes run past the body", block, pos-4, n)
		}
		pos += int(n)
	}
	if flg&lz4FlagContentSum != 0 {
		pos += 4
	}
	if pos > len(b) {
		return 0, errors.New("frame cut short in its content checksum")
	}
	return pos, nil
}
