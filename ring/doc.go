// Package ring implements the single-producer, single-consumer ring that carries batches
// from the producer to one trainer process through a shared-memory segment.
//
// The format is written down once, in PROTOCOL.md; layout.go mirrors it field by field
// and testdata/layout.golden is checked against both this package and the C library.
// The producer fills a fixed-size, page-aligned slot, then publishes it by storing the
// head counter; the consumer reads head, validates the slot header, hands out views of
// the slot, and frees it by storing the tail counter. Each side sleeps on a futex in the
// shared mapping after a short spin, and every sleep is a bounded slice that re-checks
// the peer's liveness, so nothing waits on a dead process.
//
// Validate is the only way a consumer turns mapped bytes into a Geometry; nothing is
// read through a header that has not passed it.
package ring
