// Package serve is `shmloader serve`: it runs the plan (package plan) over a Parquet
// dataset and fills one ring per local rank.
//
// The data path, per window of row groups:
//
//	queue ──► workers: read every column chunk one row group needs, once, through the
//	          dataset's store, right before its first use (colsrc.Worker), filter its
//	          rows, run each output's transforms column at a time, and write the results
//	          row-major into the window's buffers (one region per row group); flat
//	          columns are decoded by the page decoder only, straight into the
//	          transforms (package colsrc) or into Arrow arrays for the filter and the
//	          transforms' array path; arrow-go decodes nested columns from the checked
//	          bytes
//	      ──► window cache: windows are decoded once, shared by every rank, prefetched in
//	          plan order, and recycled (memory: cache capacity × window bytes)
//	      ──► rank loops: one goroutine per ring gathers its batch's rows from the windows
//	          straight into the acquired slot — the one copy — and publishes it, so each
//	          ring publishes strictly in step order.
//
// A rank's seek is answered by its own loop: it recomputes the batch's place in the
// plan and decodes only the windows that batch needs.
//
// A Verifier (verify.go, `shmloader inspect --verify`) reads every row group by the same
// roads before a job starts, writing nothing, and goes on past damage to name every
// damaged column chunk.
package serve
