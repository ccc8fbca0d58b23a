package consumer

import (
	"errors"

	"github.com/shmloader/shmloader/ring"
	"github.com/shmloader/shmloader/shm"
)

// Errors a consumer returns, for errors.Is. They are the ring's and shm's sentinels, so a
// caller needs only this package.
var (
	ErrTimeout        = ring.ErrTimeout        // a wait ran past its timeout
	ErrProducerGone   = ring.ErrProducerGone   // the producer died or stopped
	ErrEndOfStream    = ring.ErrEndOfStream    // the producer finished and everything was read
	ErrEndOfEpoch     = ring.ErrEndOfEpoch     // returned once at the end of each epoch
	ErrVersion        = ring.ErrVersion        // the segment speaks another protocol version
	ErrMagic          = ring.ErrMagic          // not a shmloader segment
	ErrSize           = ring.ErrSize           // geometry inconsistent
	ErrOffset         = ring.ErrOffset         // a tensor extent out of its slot
	ErrSchema         = ring.ErrSchema         // malformed schema entry
	ErrCorrupt        = ring.ErrCorrupt        // inconsistent slot header or counters
	ErrHeld           = ring.ErrHeld           // too many batches held: release one
	ErrNotHeld        = ring.ErrNotHeld        // release of a batch this consumer does not hold
	ErrClosed         = ring.ErrClosed         // use after Close
	ErrSeekUnanswered = ring.ErrSeekUnanswered // the stream ended before the producer saw a seek
	ErrBusy           = shm.ErrConsumerBusy    // the ring already has a consumer
	ErrPermission     = shm.ErrPermission      // segment not a 0600 file of this user
	// ErrRange: a seek beyond the run: an epoch past the producer's epochs, or a step past
	// the epoch's steps (SHML_ERANGE).
	ErrRange = errors.New("seek beyond the run")
	// ErrNoSuchRank: the job's live producer serves fewer ranks (SHML_ERANK).
	ErrNoSuchRank = errors.New("no such rank: the job's live producer serves fewer ranks")
)
