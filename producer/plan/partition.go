package plan

import (
	"fmt"
	"slices"
	"strings"
)

// Version is the plan's version: which rows a (dataset, config, seed, epoch, global batch)
// names. Saved states carry it; a state of another version is refused, never misread.
// 1: one stream per epoch, contiguous per node. 2: canonical partitions (this file).
const Version = 2

// MaxAutoPartitions bounds the automatic partition count: every power of two up to it
// divides it, so jobs of 1, 2, 4 and 8 nodes can all share one plan.
const MaxAutoPartitions = 8

// minGroupsPerPartition is how many row groups the automatic count leaves each partition
// at least, so that partitions balance well by kept rows.
const minGroupsPerPartition = 8

// AutoPartitions is the partition count `partitions: 0` stands for: the largest power of
// two up to MaxAutoPartitions that leaves every partition at least 8 row groups (at
// least 1 partition).
func AutoPartitions(groups int) int {
	p := 1
	for p*2 <= MaxAutoPartitions && groups/(p*2) >= minGroupsPerPartition {
		p *= 2
	}
	return p
}

// split deals the row groups with kept rows into n partitions balanced by kept rows:
// largest first, each to the partition holding the fewest rows so far (lowest index on a
// tie); row groups of equal size are taken in an order seeded by seed, so which ones
// share a partition depends on the seed but never on the epoch. Each partition lists its
// row groups in file order.
func split(rows []int64, groups []int, n int, seed uint64) ([][]int, []int64) {
	order := make([]int, len(groups))
	for i, j := range Perm(len(groups), seedOf(seed, 3)) {
		order[i] = groups[j]
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(min(max(rows[b]-rows[a], -1), 1)) })
	parts := make([][]int, n)
	sums := make([]int64, n)
	for _, g := range order {
		k := 0
		for i := 1; i < n; i++ {
			if sums[i] < sums[k] {
				k = i
			}
		}
		parts[k] = append(parts[k], g)
		sums[k] += rows[g]
	}
	for _, p := range parts {
		slices.Sort(p)
	}
	return parts, sums
}

// checkNodes says which node counts work when nodes does not divide partitions.
func checkNodes(partitions, nodes int) error {
	if partitions%nodes == 0 {
		return nil
	}
	var ok []string
	for d := 1; d <= partitions; d++ {
		if partitions%d == 0 {
			ok = append(ok, fmt.Sprint(d))
		}
	}
	return fmt.Errorf("%d nodes cannot share %d partitions evenly: with partitions: %d the node count must be one of %s; "+
		"or set partitions to a multiple of %d (and at most the number of row groups)", nodes, partitions, partitions, strings.Join(ok, ", "), nodes)
}
