// Package plan turns (dataset, config, seed, epoch) into the order in which rows are
// served, and says which global batch goes to which node, rank and step. Everything here
// is a pure function of its inputs: worker count, timing and restarts never change it.
// This is plan version 2 (Version); saved states carry it.
//
// Partitions. The row groups that can hold kept rows (filter pushdown and the filter's
// counts drop the others) are dealt once into P canonical partitions (`partitions`; 0
// picks AutoPartitions: the largest power of two up to 8 that leaves every partition at
// least 8 row groups). The deal depends on the seed, never on the epoch: row groups are
// taken largest first (equal sizes in an order seeded by the seed) and each goes to the
// partition with the fewest kept rows so far, the lowest index on a tie. Node k of n
// holds the partitions p with p mod n = k, in every epoch, so its cache holds the same
// row groups every epoch; n must divide P.
//
// An epoch's stream, per partition p, from (seed, epoch):
//
//  1. p's row groups are permuted (shuffle.row_groups; seed path 1, epoch, p) or kept
//     in file order.
//  2. They are cut into windows of W = shuffle.window row groups (W = 0 works as 1 with
//     rows kept in order), except that the first window of partition p holds p mod W row
//     groups when that is not 0: the partitions' windows then end at different batches.
//     A window's kept rows, concatenated in row-group order, are mixed by a permutation
//     seeded from (seed path 2, epoch, p, window).
//  3. p's stream is cut into batches of batch_size rows: batch j of p holds positions
//     [j·B, (j+1)·B) of p's stream.
//
// Global batches. Let b be the fewest batches any partition yields (with drop_last, full
// batches floor(rows_p/B); without, ceil(rows_p/B), the last one short). The first P·b
// global batches are rounds: global batch g = j·P + p is batch j of partition p. This
// sequence is the same for every node count and every number of ranks per node: only
// which trainer receives a batch changes with the layout.
//
// Assignment. In an epoch that starts at global batch base (0, unless a job resumed under
// another world size), node k serves its global batches g >= base, in increasing order;
// its j-th goes to local rank j mod R as that rank's step ⌊j/R⌋. In the rounds batch g is
// on node g mod n, so with base 0 rank r of node k receives g = (s·R + r)·n + k at step s,
// and after s steps the world of W = n·R trainers has consumed exactly the global batches
// [base, base + s·W). A state saved at step s under W1 trainers therefore resumes under
// W2 at global batch g = base + s·W1: at step g / W2 when W2 divides g, otherwise in an
// epoch started at base g.
//
// drop_last (the default): every rank of every node gets S = ⌊(P·b − base) / W⌋ steps,
// the global batches [base, base + S·W). The rows of the other batches and the last
// rows of each partition (fewer than B, plus what makes it longer than the shortest)
// are dropped and reported; DroppedRows counts them for base 0.
//
// Without drop_last every kept row is served once: after the rounds come the remaining
// batches of the longer partitions, global batches P·b onwards in (batch, partition)
// order, each on the node holding its partition. Ranks and nodes may then differ in
// batch count (serve reports it); such a tail position resumes only under the world
// size that saved it.
package plan
