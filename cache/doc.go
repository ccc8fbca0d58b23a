// Package cache keeps decoded row groups on local disk as memory-mapped files, so an
// epoch after the first gathers rows straight from the page cache instead of decoding
// Parquet again. An entry is one row group after filter and transforms: for each output
// tensor, rows × rowBytes bytes, row-major, exactly what the decoder writes. A miss
// decodes straight into a writable shared mapping of a new entry file (Create, Tensors,
// Commit); a hit maps the committed file read-only (Get) and is never copied. Entries are
// named by a Key the caller hashes over everything that changes their bytes.
//
// Several processes may share a dir. Each shard has a manifest (what is committed, and
// what is being written and how big) changed only under the shard's flock, re-read before
// every change and replaced by rename, so readers need no lock; a process notices others'
// commits by the manifest's generation. Eviction unlinks files: mappings held elsewhere
// stay valid. With an Oracle (the plan knows every future use), eviction follows
// Belady's rule and refuses entries needed later than everything they would displace;
// without one it is LRU. Bytes on disk are untrusted: headers and manifests are validated
// field by field before use, manifests are decoded only after their CRC-32C matches, and
// each entry file's CRC-32 is checked the first time a process serves it. Anything
// bad is counted (Stats.Corrupt), removed and rebuilt by the next Create, never served.
//
// The dir:
//
//	DIR/
//	  shmloader-cache      "shmloader cache\nformat 2\nshards 16\n": written once, never
//	                       changed; another format is refused (cache clear empties it)
//	  lock                 flock: shared by every open Cache, exclusive in Clear
//	  s00/ … s15/          shard of a key: first 8 key bytes (little endian) mod shards
//	    lock               flock, exclusive around each manifest read-modify-write
//	    manifest           wrapper + msgpack body, replaced by rename
//	    <key hex>.ent      committed entries
//	    <key hex>.<pid>.<seq>.<size>.tmp   an entry being written; its writer holds an
//	                       flock on it, so one nobody holds is left by a dead process
//
// An entry file:
//
//	0     ┌──────────────────────────────────────────────────────────┐
//	      │ magic "SHMLCENT" (8) │ format (u32) │ header size 4096 (u32) │
//	16    │ key (32)                                                 │
//	48    │ rows (i64) │ file size (u64)                             │
//	64    │ tensor count n (u32) │ CRC-32 (u32)  │ len(config), len(label) (u16 each) │
//	128   │ n × { offset (u64), length (u64) }        n ≤ 192         │
//	3200  │ config bytes, label bytes                 (≤ 64, ≤ 512)   │
//	4096  ├──────────────────────────────────────────────────────────┤
//	      │ tensor 0: rows × rowBytes[0]                             │
//	      │ zero padding to a multiple of 64                          │
//	      │ tensor 1 … tensor n-1 (the file ends with the last)      │
//	      └──────────────────────────────────────────────────────────┘
//
// All integers are little endian. The CRC-32 (IEEE; format 1 used CRC-32C) covers the header page with
// its CRC field zeroed, then each region (not the padding). Offsets must be exactly where
// the lengths put them, and the file size must match, or the entry is corrupt.
//
// A manifest file:
//
//	0   magic "SHMLCMAN" (8) │ format (u32) │ CRC-32C of the file, this field zeroed (u32)
//	16  generation (u64): changes on every write
//	24  body length (u64), at most 64 MiB
//	32  body: msgpack array of entries {k key, s size, r rows, c config, l label,
//	    t commit time}, then array of writes in flight {f temp name, k key, s size}
//
// The budget (Options.Size, lowered to what the disk has free) is split evenly between
// shards; a shard's committed entries plus its writes in flight never exceed its part.
package cache
