package pages

// Parquet page headers are Thrift structs in the compact protocol. compact reads them
// bounded by the bytes at hand and a nesting limit, so that no input can make it loop,
// allocate or panic.

var errHeader = corrupt("malformed page header")

// Thrift compact type codes.
const (
	ctStop = iota
	ctTrue
	ctFalse
	ctByte
	ctI16
	ctI32
	ctI64
	ctDouble
	ctBinary
	ctList
	ctSet
	ctMap
	ctStruct
)

const maxDepth = 16

type compact struct {
	b   []byte
	pos int
}

func (c *compact) byte() (byte, error) {
	if c.pos >= len(c.b) {
		return 0, errHeader
	}
	c.pos++
	return c.b[c.pos-1], nil
}

func (c *compact) uvarint() (uint64, error) {
	var v uint64
	for shift := 0; shift < 64; shift += 7 {
		b, err := c.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v, nil
		}
	}
	return 0, errHeader
}

func (c *compact) i32() (int32, error) {
	u, err := c.uvarint()
	if err != nil || u > 0xffffffff {
		return 0, errHeader
	}
	return int32(uint32(u>>1)) ^ -int32(u&1), nil
}

func (c *compact) advance(n uint64) error {
	if n > uint64(len(c.b)-c.pos) {
		return errHeader
	}
	c.pos += int(n)
	return nil
}

// fieldHeader returns the next field's id and type; type ctStop ends the struct.
func (c *compact) fieldHeader(last int) (id, typ int, err error) {
	b, err := c.byte()
	if err != nil || b == 0 {
		return 0, ctStop, err
	}
	typ = int(b & 0x0f)
	if d := int(b >> 4); d != 0 {
		return last + d, typ, nil
	}
	v, err := c.i32()
	return int(v), typ, err
}

// skip skips one value of type typ.
func (c *compact) skip(typ, depth int) error {
	if depth > maxDepth {
		return errHeader
	}
	switch typ {
	case ctTrue, ctFalse:
		return nil
	case ctByte:
		return c.advance(1)
	case ctI16, ctI32, ctI64:
		_, err := c.uvarint()
		return err
	case ctDouble:
		return c.advance(8)
	case ctBinary:
		n, err := c.uvarint()
		if err != nil {
			return err
		}
		return c.advance(n)
	case ctList, ctSet:
		b, err := c.byte()
		if err != nil {
			return err
		}
		n, elem := uint64(b>>4), int(b&0x0f)
		if n == 15 {
			if n, err = c.uvarint(); err != nil {
				return err
			}
		}
		return c.skipN(n, depth, elem)
	case ctMap:
		n, err := c.uvarint()
		if err != nil || n == 0 {
			return err
		}
		b, err := c.byte()
		if err != nil {
			return err
		}
		return c.skipN(n, depth, int(b>>4), int(b&0x0f))
	case ctStruct:
		for last := 0; ; {
			id, t, err := c.fieldHeader(last)
			if err != nil || t == ctStop {
				return err
			}
			if err := c.skip(t, depth+1); err != nil {
				return err
			}
			last = id
		}
	}
	return errHeader
}

// skipN skips n elements, each a value of every type in types (a map entry is two). Every
// element takes at least one byte, so a count beyond the bytes left is rejected at once.
func (c *compact) skipN(n uint64, depth int, types ...int) error {
	if n > uint64(len(c.b)-c.pos) {
		return errHeader
	}
	for ; n > 0; n-- {
		for _, t := range types {
			if t == ctTrue || t == ctFalse { // booleans in containers take one byte
				t = ctByte
			}
			if err := c.skip(t, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}
