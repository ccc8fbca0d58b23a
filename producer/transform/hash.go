package transform

// FNV-1a, 64 bits: the hash of hash_bucket, spelled out in the package doc so that other
// languages can recompute it.
const (
	fnvOffset = 0xcbf29ce484222325
	fnvPrime  = 0x100000001b3
)

// fnvSeed is the FNV-1a state after the seed's 8 little-endian bytes.
func fnvSeed(seed uint64) uint64 {
	return fnvInt(fnvOffset, seed)
}

// fnvInt continues h with the 8 little-endian bytes of v.
func fnvInt(h, v uint64) uint64 {
	h = (h ^ v&0xff) * fnvPrime
	h = (h ^ v>>8&0xff) * fnvPrime
	h = (h ^ v>>16&0xff) * fnvPrime
	h = (h ^ v>>24&0xff) * fnvPrime
	h = (h ^ v>>32&0xff) * fnvPrime
	h = (h ^ v>>40&0xff) * fnvPrime
	h = (h ^ v>>48&0xff) * fnvPrime
	return (h ^ v>>56) * fnvPrime
}

// fnvString continues h with the bytes of s.
func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

// strHash is hash_bucket on a string column, with the fill_null that came before it;
// it runs while the strings are read, so they are never copied.
type strHash struct {
	seed    uint64 // FNV-1a state after the seed bytes
	buckets uint64
	filled  bool  // a fill_null came first: nulls hash as fill
	fill    int64 // the fill string's bucket
}

func (h *strHash) bucket(s string) int64 {
	return int64(fnvString(h.seed, s) % h.buckets)
}
