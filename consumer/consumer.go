// Package consumer is the Go reading end of a shmloader job: attach to the ring of one
// rank, take batches that view shared memory, release them, seek, close.
//
//	c, err := consumer.Attach("train", 0, consumer.Options{Timeout: 30 * time.Second})
//	for {
//		b, err := c.Next(time.Minute)
//		if errors.Is(err, consumer.ErrEndOfEpoch) { continue }
//		if err != nil { break } // ErrEndOfStream, ErrProducerGone, ...
//		use(b.Tensors)
//		c.Release(b)
//	}
//
// Nothing is copied: a Batch's tensors point into the slot until it is released. The
// header and schema are validated once at attach and every slot header at Next, so a
// broken or hostile producer gets an error, never a read outside the mapping.
package consumer

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/shmloader/shmloader/ring"
	"github.com/shmloader/shmloader/shm"
)

// Options tune Attach. The zero value is usable.
type Options struct {
	Dir     string        // segment directory; default $SHMLOADER_SHM_DIR or /dev/shm
	Timeout time.Duration // how long Attach waits for a live producer; 0 means 30 s, < 0 forever
}

// Consumer reads one ring. It is not safe for concurrent use.
type Consumer struct {
	Job  string
	Rank int
	seg  *shm.Segment
	r    *ring.Reader
}

// Attach waits until a live producer serves rank of job, validates its ring and claims it.
func Attach(job string, rank int, o Options) (*Consumer, error) {
	if err := shm.ValidateJob(job); err != nil {
		return nil, err
	}
	if rank < 0 {
		return nil, fmt.Errorf("consumer: rank %d is negative", rank)
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	path := shm.SegmentPath(shm.Dir(o.Dir), os.Getuid(), job, rank)
	deadline := time.Now().Add(timeout)
	for {
		c, err := tryAttach(path, job, rank)
		if err == nil {
			return c, nil
		}
		if errors.Is(err, shm.ErrNotFound) {
			if n := liveRanks(o.Dir, job); rank >= n && n > 0 {
				return nil, fmt.Errorf("attach %s: job %q has %d rank(s): %w", path, job, n, ErrNoSuchRank)
			}
		}
		// Not there yet, header not written yet, or a dead producer's segment that a
		// restart will replace: wait. Anything else is final.
		if !errors.Is(err, shm.ErrNotFound) && !errors.Is(err, ring.ErrNotReady) && !errors.Is(err, ErrProducerGone) {
			return nil, err
		}
		if timeout > 0 && time.Now().After(deadline) {
			if errors.Is(err, ErrProducerGone) {
				return nil, fmt.Errorf("attach %s: only a segment of a dead producer: %w", path, ErrProducerGone)
			}
			return nil, fmt.Errorf("attach %s: no live producer after %v: %w (%v)", path, timeout, ErrTimeout, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// liveRanks is the rank count in the published header of rank 0 of job, if a live
// producer serves it, else 0.
func liveRanks(dir, job string) int {
	seg, err := shm.Open(shm.SegmentPath(shm.Dir(dir), os.Getuid(), job, 0))
	if err != nil {
		return 0
	}
	defer seg.Close()
	if ok, err := seg.ProducerAlive(); !ok || err != nil {
		return 0
	}
	g, err := ring.Validate(seg.Mem, job, 0)
	if err != nil {
		return 0
	}
	return int(g.Ranks)
}

func tryAttach(path, job string, rank int) (c *Consumer, err error) {
	seg, err := shm.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			seg.Close()
		}
	}()
	alive := func() error {
		ok, err := seg.ProducerAlive()
		if err != nil {
			return fmt.Errorf("%s: liveness check: %w", path, err)
		}
		if !ok {
			return ErrProducerGone
		}
		return nil
	}
	if err := alive(); err != nil {
		return nil, err
	}
	g, err := ring.Validate(seg.Mem, job, rank)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := seg.ClaimConsumer(); err != nil {
		return nil, err
	}
	r, err := ring.NewReader(seg.Mem, g, alive)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Consumer{Job: job, Rank: rank, seg: seg, r: r}, nil
}

// Geometry is the validated ring layout.
func (c *Consumer) Geometry() *ring.Geometry { return c.r.Geometry() }

// Next returns the next batch, waiting up to timeout (< 0: forever). ErrEndOfEpoch comes
// once at each epoch's end (Batch is nil; the next call starts the next epoch).
func (c *Consumer) Next(timeout time.Duration) (*Batch, error) {
	if c.r == nil {
		return nil, ErrClosed
	}
	v, _, err := c.r.Next(timeout)
	if err != nil {
		return nil, fmt.Errorf("job %s rank %d: %w", c.Job, c.Rank, err)
	}
	return newBatch(v, c.r.Geometry()), nil
}

// Release hands b back to the producer. b's tensors must not be used afterwards.
func (c *Consumer) Release(b *Batch) error {
	if c.r == nil {
		return ErrClosed
	}
	return c.r.Release(b.Seq)
}

// Held is the number of batches held.
func (c *Consumer) Held() int {
	if c.r == nil {
		return 0
	}
	return c.r.Held()
}

// Seek repositions this rank's stream: the next batch is (epoch, step). Every held batch is
// released first; their tensors must not be used afterwards.
func (c *Consumer) Seek(epoch, step uint64) error {
	if c.r == nil {
		return ErrClosed
	}
	// Beyond the run the header names (PROTOCOL.md "Seek"): refused, nothing written.
	if g := c.r.Geometry(); (g.Epochs != 0 && epoch >= g.Epochs) || step > g.StepsPerEpoch {
		return fmt.Errorf("%w: (%d, %d) with epochs 0..%d and steps 0..%d per epoch (step %d is the epoch's end)",
			ErrRange, epoch, step, int64(g.Epochs)-1, int64(g.StepsPerEpoch)-1, g.StepsPerEpoch)
	}
	c.r.Seek(epoch, step)
	return nil
}

// Done tells the producer that the job is done (shml_done): it stops as soon as no
// consumer reads any more.
func (c *Consumer) Done() error {
	if c.r == nil {
		return ErrClosed
	}
	c.r.Done()
	return nil
}

// Close releases every held batch, gives up the ring and unmaps it. Tensors of held
// batches must not be used afterwards.
func (c *Consumer) Close() error {
	if c.r == nil {
		return nil
	}
	c.r.Close()
	c.r = nil
	return c.seg.Close()
}
