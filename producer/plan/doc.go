// Package plan turns (dataset, config, seed, epoch) into the order in which rows are
// served, and says which global batch goes to which node, rank and step. Everything here
// is a pure function of its inputs: worker count, timing and restarts never change it.
//
// An epoch's plan, from (seed, epoch):
//
//  1. The row groups that can hold kept rows (filter pushdown and the filter's counts
//     drop the others) are permuted (shuffle.row_groups) or kept in file order.
//  2. Consecutive runs of W of them form windows (shuffle.window = W; 0 means windows of
//     one row group whose rows keep their order). A window's kept rows, concatenated in
//     row-group order, are mixed by a permutation seeded from (seed, epoch, window).
//  3. The windows' rows, one window after another, are cut into global batches of
//     batch_size rows: global batch g holds stream positions [g·B, (g+1)·B).
//
// With drop_last (the default) the number of global batches is the largest multiple of
// the world size (nodes × ranks) whose rows fit, so every rank gets the same number of
// batches per epoch; the rows after it are dropped and reported. Without drop_last the
// last batch may be short and ranks may differ by one batch.
//
// Assignment: node k of n serves the contiguous global batches
// [⌊k·G/n⌋, ⌊(k+1)·G/n⌋) of each epoch (G global batches), so it reads only the windows
// those batches touch. Within the node, its j-th batch goes to local rank j mod R as
// that rank's step ⌊j/R⌋. With one node, global batch g goes to rank g mod R, step ⌊g/R⌋.
package plan
