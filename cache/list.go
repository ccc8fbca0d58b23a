package cache

import (
	"cmp"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Listing describes a cache dir for `shmloader cache ls`. List builds it from the files
// alone, without locks and without changing anything, so it works beside live processes.
type Listing struct {
	Dir          string
	Format       int           // the dir's format version; 0 when it has no info file
	Shards       int           // shard dirs found
	Entries      int           // valid entries of this format, listed in a manifest or not
	Bytes        int64         // their bytes on disk
	Configs      []ConfigUsage // largest first
	PerShard     []ShardUsage  // in shard order
	OtherVersion []string      // entry files of another format version (all of them, if the dir's is)
	Temps        []TempFile    // temp files: writes in flight (Live) or left by killed processes
	Corrupt      []string      // files in shard dirs that are not valid entries
	Notes        []string      // anything else worth saying: manifests missing or corrupt, ...
}

// ConfigUsage is the entries of one Meta.Config.
type ConfigUsage struct {
	Config  string
	Entries int
	Bytes   int64
	Labels  []string // a sample, in key order
}

// ShardUsage is one shard dir.
type ShardUsage struct {
	Name     string
	Entries  int
	Bytes    int64
	Unlisted int    // valid entries its manifest does not list (adopted at the next Open)
	Manifest string // "ok", "missing" or what is wrong with it
}

// TempFile is a temp file in a shard dir.
type TempFile struct {
	Path  string
	Pid   int // the writer's, from the name; 0 if unknown
	Bytes int64
	Live  bool // a process still holds it
}

const labelSample = 3

// List describes the cache in dir.
func List(dir string) (*Listing, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, &Error{Op: "list", Path: dir, Err: err}
	}
	names := make([]string, len(des))
	for i, de := range des {
		names[i] = de.Name()
	}
	if !looksLikeCache(names) {
		return nil, &Error{Op: "list", Path: dir, Err: ErrNotCache}
	}
	l := &Listing{Dir: dir}
	in, err := readInfo(dir)
	switch {
	case err == nil:
		l.Format = in.format
	case errors.Is(err, fs.ErrNotExist):
		l.Notes = append(l.Notes, "no info file: the next Open starts the dir afresh")
	case errors.Is(err, ErrFormat):
		l.Format = in.format
		l.Notes = append(l.Notes, err.Error()+"; `shmloader cache clear` empties it")
	default:
		l.Notes = append(l.Notes, err.Error())
	}
	configs := map[string]*ConfigUsage{}
	for _, name := range names {
		if i, ok := parseShardName(name); ok && l.Format == FormatVersion {
			l.listShard(filepath.Join(dir, name), i, configs)
		} else if ok {
			l.listForeign(filepath.Join(dir, name))
		}
	}
	for _, cu := range configs {
		l.Configs = append(l.Configs, *cu)
	}
	slices.SortFunc(l.Configs, func(a, b ConfigUsage) int {
		if a.Bytes != b.Bytes {
			return cmp.Compare(b.Bytes, a.Bytes)
		}
		return strings.Compare(a.Config, b.Config)
	})
	return l, nil
}

// listShard adds one shard dir of this format.
func (l *Listing) listShard(sdir string, i int, configs map[string]*ConfigUsage) {
	l.Shards++
	su := ShardUsage{Name: shardName(i), Manifest: "ok"}
	sh := &shard{dir: sdir}
	m, _, err := sh.read()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		su.Manifest, m = "missing", newManifest()
	case err != nil:
		su.Manifest, m = err.Error(), newManifest()
		l.Notes = append(l.Notes, err.Error())
	}
	des, _ := os.ReadDir(sdir)
	for _, de := range des {
		name, path := de.Name(), filepath.Join(sdir, de.Name())
		k, isEntry := parseEntryName(name)
		switch {
		case name == lockName || name == manifestName || de.IsDir():
		case strings.HasSuffix(name, tempSuffix):
			l.Temps = append(l.Temps, tempInfo(path, name))
		case !isEntry:
			l.Corrupt = append(l.Corrupt, path)
		default:
			r, listed := m.entries[k]
			if !listed {
				h, _, err := readHeader(path)
				switch {
				case errors.Is(err, ErrVersion):
					l.OtherVersion = append(l.OtherVersion, path)
					continue
				case err != nil || h.key != k:
					l.Corrupt = append(l.Corrupt, path)
					continue
				}
				r = rec{size: h.lay.size, rows: h.rows, config: h.config, label: h.label}
				su.Unlisted++
			}
			su.Entries++
			su.Bytes += r.size
			cu := configs[r.config]
			if cu == nil {
				cu = &ConfigUsage{Config: r.config}
				configs[r.config] = cu
			}
			cu.Entries++
			cu.Bytes += r.size
			if len(cu.Labels) < labelSample && r.label != "" {
				cu.Labels = append(cu.Labels, r.label)
			}
		}
	}
	l.Entries += su.Entries
	l.Bytes += su.Bytes
	l.PerShard = append(l.PerShard, su)
}

// listForeign adds a shard dir of a dir of another format: nothing in it is parsed.
func (l *Listing) listForeign(sdir string) {
	l.Shards++
	des, _ := os.ReadDir(sdir)
	for _, de := range des {
		if n := de.Name(); n != lockName && !de.IsDir() {
			l.OtherVersion = append(l.OtherVersion, filepath.Join(sdir, n))
		}
	}
}

func tempInfo(path, name string) TempFile {
	t := TempFile{Path: path}
	_, t.Pid, t.Bytes, _ = parseTemp(name)
	fd, err := unix.Open(path, openFlags(false), 0)
	if err != nil {
		return t
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil {
		t.Bytes = st.Size
	}
	if _, _, _, ok := parseTemp(name); ok {
		free, err := tryFlock(fd, unix.LOCK_SH)
		t.Live = err == nil && !free
	}
	return t
}
