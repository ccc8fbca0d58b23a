package pages

// Check walks every page of chunk c and returns the first thing wrong with one: for a
// flat column everything Read checks, down to each value; for a repeated one each page's
// header, body size, decompressed size, CRC and levels (every repetition and definition
// level in range, exactly as many as the header says) and that the pages' levels add up
// to the footer's count. The caller uses it to say which page is at fault when another
// reader failed on the chunk.
func Check(c Chunk) error {
	var d Decoder
	if err := d.Reset(c); err != nil && c.MaxRep == 0 {
		return err
	}
	if c.MaxRep == 0 {
		var v Values
		for left := c.Values; left > 0; {
			n, err := d.Read(int(min(left, 4096)), &v)
			if err != nil {
				return err
			}
			left -= int64(n)
		}
		return d.Finish()
	}
	return d.checkNested(c)
}

// checkNested is Check for a repeated column: levels are walked, values are not.
func (d *Decoder) checkNested(c Chunk) error {
	codec, err := codecOf(c)
	if err != nil {
		return &Error{Page: -1, Err: err}
	}
	d.c, d.codec = c, codec
	d.pos, d.page, d.started = 0, -1, 0
	var lv []uint32
	for d.pos < len(c.Data) {
		h, raw, err := d.header()
		if err != nil {
			return err
		}
		if h.Type != DataPage && h.Type != DataPageV2 {
			if h.Type == DictionaryPage {
				if _, err := d.decompress(&d.dictBuf, raw, h.Uncompressed); err != nil {
					return d.fail(err)
				}
			}
			continue
		}
		if int64(h.NumValues) > c.Values-d.started {
			return d.fail(corrupt("%d values, but only %d of the footer's %d are left", h.NumValues, c.Values-d.started, c.Values))
		}
		lv = growTo(lv, h.NumValues)
		if err := d.checkLevels(h, raw, lv); err != nil {
			return d.fail(err)
		}
		d.started += int64(h.NumValues)
	}
	if d.started != c.Values {
		return &Error{Page: -1, Err: corrupt("data pages hold %d values, the footer says %d", d.started, c.Values)}
	}
	return nil
}

// checkLevels decompresses a data page and reads its repetition and definition levels.
func (d *Decoder) checkLevels(h Header, raw []byte, lv []uint32) error {
	type section struct {
		what   string
		max    int16
		enc    Encoding
		b      []byte
		packed bool
	}
	secs := [2]section{{"repetition levels", d.c.MaxRep, h.RepEncoding, nil, false},
		{"definition levels", d.c.MaxDef, h.DefEncoding, nil, false}}
	if h.Type == DataPage {
		body, err := d.decompress(&d.pageBuf, raw, h.Uncompressed)
		if err != nil {
			return err
		}
		for i := range secs {
			if s := &secs[i]; s.max > 0 {
				if s.b, body, s.packed, err = levelSection(body, s.enc, s.what, h.NumValues, bitWidth(uint32(s.max)+1)); err != nil {
					return err
				}
			}
		}
	} else {
		if h.RepLen+h.DefLen > len(raw) {
			return corrupt("%d+%d bytes of levels in a %d-byte page", h.RepLen, h.DefLen, len(raw))
		}
		secs[0].b, secs[1].b = raw[:h.RepLen], raw[h.RepLen:h.RepLen+h.DefLen]
		if h.V2Compressed {
			if _, err := d.decompress(&d.pageBuf, raw[h.RepLen+h.DefLen:], h.Uncompressed-h.RepLen-h.DefLen); err != nil {
				return err
			}
		}
	}
	var hy hybrid
	for i, s := range secs {
		if s.max == 0 {
			continue
		}
		hy.resetLevels(s.b, s.packed, uint32(s.max)+1, h.NumValues)
		if err := hy.read(lv); err != nil {
			return corrupt("%s: %v", s.what, err)
		}
		if err := hy.end(); err != nil {
			return corrupt("%s: %v", s.what, err)
		}
		if i == 0 && len(lv) > 0 && lv[0] != 0 && h.Type == DataPageV2 {
			return corrupt("a v2 page starts inside a row (repetition level %d)", lv[0])
		}
	}
	return nil
}
