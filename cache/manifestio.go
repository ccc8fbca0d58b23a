package cache

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// read loads and validates the shard's manifest file; a missing one is fs.ErrNotExist.
func (sh *shard) read() (*manifest, uint64, error) {
	path := sh.path(manifestName)
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, 0, &Error{Op: "stat", Path: path, Err: err}
	}
	if st.Size < manifestHdr || st.Size > manifestHdr+maxManifestBody {
		return nil, 0, &Error{Op: "read manifest", Path: path,
			Err: kindf(ErrBadSize, "manifest of %d bytes, want %d..%d", st.Size, manifestHdr, manifestHdr+maxManifestBody)}
	}
	b := make([]byte, st.Size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, 0, &Error{Op: "read manifest", Path: path, Err: kindf(ErrBadSize, "short read: %v", err)}
	}
	m, err := parseManifest(b)
	if err != nil {
		return nil, 0, &Error{Op: "read manifest", Path: path, Err: err}
	}
	return m, st.Ino, nil
}

// peekManifest returns the inode and generation of the manifest at path, reading only its
// header: enough to tell whether it changed since it was last read.
func peekManifest(path string) (ino, gen uint64, err error) {
	fd, err := unix.Open(path, openFlags(false), 0)
	if err != nil {
		return 0, 0, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, 0, err
	}
	var hdr [manifestHdr]byte
	if n, err := unix.Pread(fd, hdr[:], 0); err != nil || n != len(hdr) {
		return 0, 0, &Error{Op: "read manifest", Path: path, Err: kindf(ErrBadSize, "short header")}
	}
	return st.Ino, binary.LittleEndian.Uint64(hdr[offGen:]), nil
}

// write replaces the shard's manifest with m (lock held): a temp file renamed over the
// old one, so readers without the lock see the old manifest or the new, whole.
func (sh *shard) write(m *manifest) (uint64, error) {
	m.gen = max(m.gen+1, uint64(time.Now().UnixNano()))
	b, err := encodeManifest(m)
	path, tmp := sh.path(manifestName), sh.path(manifestTempName())
	if err != nil {
		return 0, &Error{Op: "write manifest", Path: path, Err: err}
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return 0, &Error{Op: "write manifest", Path: tmp, Err: err}
	}
	var st unix.Stat_t
	_, err = f.Write(b)
	if err == nil {
		err = unix.Fstat(int(f.Fd()), &st)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		if diskFull(err) {
			err = fmt.Errorf("%w: %v", ErrNoSpace, err)
		}
		return 0, &Error{Op: "write manifest", Path: tmp, Err: err}
	}
	return st.Ino, nil
}
