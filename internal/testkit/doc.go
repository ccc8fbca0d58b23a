// Package testkit is what the module's tests share: the re-exec helper, with which a test
// binary runs itself again as another process (a producer, a trainer, the command), the
// writers of small Parquet files, and Arrow arrays made from plain Go values. It is for
// _test.go files only: no package of the module imports it from its other files
// (TestOnlyTestsImportIt checks), so nothing in it reaches a binary.
package testkit
