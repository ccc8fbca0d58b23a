// Package shm owns the POSIX shared-memory files of a job: naming, exclusive creation,
// free-space checks, mapping, and liveness.
//
// A job on a host is one lock file plus one segment per rank, all in one directory
// (default /dev/shm, or $SHMLOADER_SHM_DIR). The live producer holds open-file-description
// locks that the kernel drops when it dies: a write lock on the whole job lock file
// (one producer per job), and on byte 0 of each segment (that segment's producer is
// alive). A consumer holds byte 1 of its segment (one consumer per ring). Because
// liveness is a kernel lock and not a pid, a crash never leaves anything that a restart
// or `shmloader clean` can mistake for a live job. ring/PROTOCOL.md has the full story.
package shm
