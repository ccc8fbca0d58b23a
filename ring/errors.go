package ring

import "errors"

// Sentinel errors, one per failure the protocol names (PROTOCOL.md, "Validation").
// The C library's SHML_E* codes correspond one to one.
var (
	ErrTimeout        = errors.New("timed out")                                                                     // SHML_ETIMEOUT
	ErrProducerGone   = errors.New("producer is gone (died or stopped)")                                            // SHML_EGONE
	ErrEndOfStream    = errors.New("end of stream")                                                                 // SHML_EEOS
	ErrEndOfEpoch     = errors.New("end of epoch")                                                                  // SHML_EEPOCH
	ErrMagic          = errors.New("bad magic: not a shmloader ring")                                               // SHML_EMAGIC
	ErrVersion        = errors.New("protocol version mismatch")                                                     // SHML_EVERSION
	ErrSize           = errors.New("ring geometry inconsistent with itself or the file")                            // SHML_ESIZE
	ErrOffset         = errors.New("tensor extent outside its slot or overlapping")                                 // SHML_EOFFSET
	ErrSchema         = errors.New("malformed tensor schema entry")                                                 // SHML_ESCHEMA
	ErrCorrupt        = errors.New("inconsistent slot header or counter")                                           // SHML_ECORRUPT
	ErrHeld           = errors.New("holding slot_count-1 slots already: release one")                               // SHML_EHELD
	ErrNotHeld        = errors.New("batch is not held by this consumer")                                            // SHML_EINVAL
	ErrNotReady       = errors.New("ring header not published yet")                                                 // (retried internally)
	ErrSeekUnanswered = errors.New("seek not answered: the producer finished its stream before it saw the request") // SHML_ESEEK
	ErrClosed         = errors.New("closed")                                                                        // use after Close
)
