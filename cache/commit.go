package cache

import (
	"encoding/binary"
	"errors"

	"golang.org/x/sys/unix"
)

// testHookRenamed, when set by a test, runs between an entry's rename and its manifest
// write: the window a killed writer leaves an entry the manifest does not list.
var testHookRenamed func()

// Commit checksums the filled regions, writes the header, renames the temp file to the
// entry's name and lists it in the manifest. The returned Entry views the same mapping,
// now read-only, and is trusted: this process never checks its checksum again. If
// another process committed the key meanwhile, its file stays and this one is dropped;
// the bytes are the same, as the key says.
func (w *Writer) Commit() (*Entry, error) {
	if w.done || w.mem == nil {
		return nil, &Error{Op: "commit", Path: w.sh.path(w.tmp), Err: errors.New("writer already committed or aborted")}
	}
	h := header{key: w.key, rows: w.meta.Rows, config: w.meta.Config, label: w.meta.Label, lay: w.lay}
	h.encode(w.mem)
	binary.LittleEndian.PutUint32(w.mem[offCRC:], checksum(w.mem, w.lay))
	var st unix.Stat_t
	err := unix.Fstat(w.fd, &st)
	if err == nil {
		err = unix.Mprotect(w.mem, unix.PROT_READ)
	}
	if err != nil {
		w.c.stats.writeErrors.Add(1)
		w.Abort()
		return nil, &Error{Op: "commit", Path: w.sh.path(w.tmp), Err: err}
	}
	final := w.sh.path(entryName(w.key))
	err = w.sh.update(func(m *manifest) (bool, error) {
		delete(m.pending, w.tmp)
		if _, dup := m.entries[w.key]; dup && unix.Access(final, unix.F_OK) == nil {
			unix.Unlink(w.sh.path(w.tmp))
			return true, nil
		}
		if err := unix.Rename(w.sh.path(w.tmp), final); err != nil {
			return true, &Error{Op: "commit", Path: final, Err: err}
		}
		if testHookRenamed != nil {
			testHookRenamed()
		}
		m.entries[w.key] = rec{size: w.lay.size, rows: w.meta.Rows, config: w.meta.Config,
			label: w.meta.Label, created: tick()}
		return true, nil
	})
	if err != nil {
		w.c.stats.writeErrors.Add(1)
		w.Abort()
		return nil, err
	}
	w.done = true
	unix.Close(w.fd) // the file has its final name: its lock has nothing left to guard
	w.sh.used(w.key, idOf(&st))
	e := &Entry{mem: w.mem, rows: w.meta.Rows}
	e.tensors = views(e.mem, w.lay)
	w.mem = nil
	return e, nil
}

// Abort drops the entry: the temp file and its reservation. After Commit it does
// nothing, so `defer w.Abort()` is always right.
func (w *Writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	if w.mem != nil {
		unix.Munmap(w.mem)
		w.mem = nil
	}
	unix.Unlink(w.sh.path(w.tmp))
	unix.Close(w.fd)
	w.sh.update(func(m *manifest) (bool, error) {
		_, listed := m.pending[w.tmp]
		delete(m.pending, w.tmp)
		return listed, nil
	})
}
