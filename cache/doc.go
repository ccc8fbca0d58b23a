// Package cache will keep decoded columns in memory-mapped files on local disk, keyed by
// everything that changes their bytes (file, row group, columns, transforms). It is empty
// until the cache milestone; the folder exists so the data path's stages are all visible.
package cache
