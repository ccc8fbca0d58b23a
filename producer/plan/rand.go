package plan

import "math/bits"

// The permutations are defined here, not by math/rand, so that they can never change
// with a Go release: a stream's bytes depend only on the seed.

// mix is splitmix64's finalizer: a bijective 64-bit hash.
func mix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

// seedOf derives the seed of one shuffle from the job seed and a path of indices.
func seedOf(seed uint64, path ...uint64) uint64 {
	s := mix(seed)
	for _, p := range path {
		s = mix(s ^ mix(p+0x632BE59BD9B4E019))
	}
	return s
}

// rng is splitmix64.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9E3779B97F4A7C15
	z := r.s
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// below returns a uniform value in [0, n) (Lemire's multiply-shift, with rejection).
func (r *rng) below(n uint64) uint64 {
	hi, lo := bits.Mul64(r.next(), n)
	if lo < n {
		for t := -n % n; lo < t; {
			hi, lo = bits.Mul64(r.next(), n)
		}
	}
	return hi
}

// Perm returns a permutation of [0, n) by Fisher-Yates, seeded by seed.
func Perm(n int, seed uint64) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i)
	}
	r := rng{seed}
	for i := n - 1; i > 0; i-- {
		j := r.below(uint64(i + 1))
		p[i], p[j] = p[j], p[i]
	}
	return p
}
