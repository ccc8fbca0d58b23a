package gen

import "strconv"

// mix is splitmix64's finalizer: a bijection on uint64 whose outputs look independent
// for consecutive inputs, so mix(key + id) gives every (column, row) its own random word.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// unit maps a random word to [0, 1) with 53 bits.
func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// normal is an approximately standard normal value from one random word: the sum of four
// 16-bit uniforms (Irwin-Hall), centred and scaled to unit variance. Integer sums and a
// single multiply keep it bit-identical on every platform.
func normal(h uint64) float64 {
	s := h&0xffff + h>>16&0xffff + h>>32&0xffff + h>>48
	return (float64(s)/65536 - 2) * 1.7320508075688772
}

func (c *column) isNull(id int64, frac float64) bool {
	return c.nullable && unit(mix(c.nullKey+uint64(id))) < frac
}

// feature is the value of a feature column before nulls are applied. The conversion to
// float64 before adding forbids a fused multiply-add, which would change the last bit on
// some platforms.
func (c *column) feature(id int64) float32 {
	return float32(float64(c.scale*normal(mix(c.key+uint64(id)))) + c.mean)
}

// categorical skews towards small ids (the smaller of two uniform draws), like real
// categorical data where a few values are frequent.
func (c *column) categorical(id int64) int64 {
	h := mix(c.key + uint64(id))
	a, b := h%c.card, mix(h)%c.card
	return int64(min(a, b))
}

// str returns "v<n>", or "" for about 1% of rows.
func (c *column) str(id int64, buf []byte) []byte {
	h := mix(c.key + uint64(id))
	if h>>57 == 0 {
		return buf[:0]
	}
	return strconv.AppendUint(append(buf[:0], 'v'), h%c.card, 10)
}

// seqLen is the length of row id's list, uniform in 0..max.
func (c *column) seqLen(id int64, max int) int {
	return int(mix(c.key+uint64(id)) % uint64(max+1))
}

// seqItem is element k of row id's list: an item id below 100000.
func (c *column) seqItem(id int64, k int) int64 {
	return int64(mix(mix(c.key^0x3c6ef372fe94f82b+uint64(id))+uint64(k)) % 100000)
}

// label is 1 for roughly a quarter of the rows, more likely when f001+f002-f003 is high,
// so that a model trained on the features can learn something.
func label(id int64, signal []*column, noise *column) float32 {
	score := normal(mix(noise.key + uint64(id)))
	for i, c := range signal {
		z := normal(mix(c.key + uint64(id)))
		if i == 2 {
			z = -z
		}
		score += z
	}
	if score > 1.5 {
		return 1
	}
	return 0
}
