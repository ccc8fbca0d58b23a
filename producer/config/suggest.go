package config

import (
	"fmt"
	"strings"
)

// didYouMean returns ` (did you mean "x"?)` for the candidate closest to word, or "" when
// none is close enough to be a plausible typo.
func didYouMean(word string, candidates []string) string {
	if best, ok := Closest(word, candidates); ok {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

// Closest is the candidate closest to word, if one is close enough to be a plausible
// typo of it (case and word separators aside): what a "did you mean" names.
func Closest(word string, candidates []string) (string, bool) {
	best, bestDist := "", -1
	for _, c := range candidates {
		d := editDistance(fold(word), fold(c))
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	return best, bestDist >= 0 && bestDist <= 1+len(word)/4
}

// fold ignores case and word separators, so "BatchSize" and "batch-size" both find
// "batch_size".
func fold(s string) string {
	return strings.NewReplacer("_", "", "-", "", " ", "").Replace(strings.ToLower(s))
}

// editDistance counts the insertions, deletions, substitutions and swaps of adjacent
// bytes that turn a into b (optimal string alignment): a swap is the commonest typo.
func editDistance(a, b string) int {
	rows := make([][]int, len(a)+1)
	for i := range rows {
		rows[i] = make([]int, len(b)+1)
		rows[i][0] = i
	}
	for j := range rows[0] {
		rows[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d := min(rows[i-1][j]+1, rows[i][j-1]+1, rows[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d = min(d, rows[i-2][j-2]+1)
			}
			rows[i][j] = d
		}
	}
	return rows[len(a)][len(b)]
}
