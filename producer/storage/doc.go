// Package storage is where a dataset's bytes come from, and the only place the producer
// touches them: listing a dataset's objects (path, size and an identity that changes
// when the content does), opening one, and reading ranges of it under a context.
//
// Store is the seam; Local, the files of a local or mounted file system, is its first
// implementation. Everything above it (package dataset: footers and column chunks; the
// page decoder; serve) reads through a Store and never opens, stats or lists a dataset
// file itself. A test of this package (boundary_test.go) keeps it so.
//
// The shape follows pebble's vfs.FS and objstorage/remote.Storage: a Reader reads ranges
// with ReadAt(ctx, p, off) and returns all of p or an error, never a short read, so a
// caller never decodes bytes it did not ask for.
package storage
