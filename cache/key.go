package cache

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Key names an entry: a SHA-256 the caller builds over everything that changes the
// entry's bytes (file identity, row group, columns, filter, transforms, output layout).
type Key [32]byte

// String is the key in lower-case hex; it is also the entry's file name stem.
func (k Key) String() string { return hex.EncodeToString(k[:]) }

// ParseKey reads the hex form written by String.
func ParseKey(s string) (Key, error) {
	var k Key
	if len(s) != 2*len(k) {
		return k, kindf(ErrBadKey, "key %q: want %d hex digits", s, 2*len(k))
	}
	if _, err := hex.Decode(k[:], []byte(s)); err != nil || strings.ToLower(s) != s {
		return k, kindf(ErrBadKey, "key %q: not lower-case hex", s)
	}
	return k, nil
}

// shard is the key's shard among n: fixed by the key's first bytes.
func (k Key) shard(n int) int { return int(binary.LittleEndian.Uint64(k[:8]) % uint64(n)) }

// Shard is the shard of key among n: callers sizing a cache for known keys use it (the
// budget is split evenly between shards).
func (k Key) Shard(n int) int { return k.shard(n) }

// Meta describes an entry for people (shmloader cache ls). It is stored in the entry's
// header and in its shard's manifest, and never affects what is served.
type Meta struct {
	Config string // short id of the config part of the key: groups entries in ls
	Label  string // e.g. "part-00003.parquet row group 5"
	Rows   int64
}

// Caps on Meta strings, so the header page always has room for them.
const (
	maxConfigLen = 64
	maxLabelLen  = 512
)

// clip shortens s to at most n bytes without splitting a UTF-8 sequence.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// File names inside a shard dir.
const (
	entrySuffix  = ".ent"
	tempSuffix   = ".tmp"
	manifestName = "manifest"
	lockName     = "lock"
)

func shardName(i int) string   { return fmt.Sprintf("s%02d", i) }
func entryName(k Key) string   { return k.String() + entrySuffix }
func manifestTempName() string { return fmt.Sprintf("%s.%d%s", manifestName, pid, tempSuffix) }

// tempName is a writer's temp file: key, pid, a per-process sequence number and the
// reserved size, so a scan can rebuild the writer's reservation from the name alone.
func tempName(k Key, seq uint64, size int64) string {
	return fmt.Sprintf("%s.%d.%d.%d%s", k, pid, seq, size, tempSuffix)
}

// parseTemp reads a name written by tempName.
func parseTemp(name string) (k Key, tpid int, size int64, ok bool) {
	f := strings.Split(strings.TrimSuffix(name, tempSuffix), ".")
	if len(f) != 4 || !strings.HasSuffix(name, tempSuffix) {
		return k, 0, 0, false
	}
	k, err := ParseKey(f[0])
	p, err1 := strconv.Atoi(f[1])
	_, err2 := strconv.ParseUint(f[2], 10, 64)
	size, err3 := strconv.ParseInt(f[3], 10, 64)
	if err != nil || err1 != nil || err2 != nil || err3 != nil || size < 0 {
		return k, 0, 0, false
	}
	return k, p, size, true
}

// parseEntryName reads a name written by entryName.
func parseEntryName(name string) (Key, bool) {
	if !strings.HasSuffix(name, entrySuffix) {
		return Key{}, false
	}
	k, err := ParseKey(strings.TrimSuffix(name, entrySuffix))
	return k, err == nil
}

// parseShardName reads a name written by shardName.
func parseShardName(name string) (int, bool) {
	if len(name) != 3 || name[0] != 's' {
		return 0, false
	}
	i, err := strconv.Atoi(name[1:])
	return i, err == nil && i >= 0 && i < MaxShards
}
