// Package synthetic is a test producer: it serves a job whose batches are a pure function
// of (seed, rank, epoch, step), so the transport can be tested and measured end to end
// without Parquet. `shmloader debug-produce` runs it.
//
// Every slot has four tensors, in this order:
//
//	id      int64  [rows]            ((epoch*batches + step)*ranks + rank)*rows + i
//	payload uint8  [rows, row_bytes] pseudo-random bytes seeded by (seed, id)
//	crc     uint32 [rows]            CRC-32 (IEEE) of the row's payload
//	t_ns    int64  [rows]            row 0: CLOCK_MONOTONIC ns just before publish
//
// With Empty, a slot has only t_ns: the smallest batch there is, for handoff latency.
package synthetic

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shmloader/shmloader/ring"
)

// Config describes the stream.
type Config struct {
	Dir          string
	Job          string
	Ranks        int
	Depth        int           // slots per ring
	Rows         int           // rows per batch
	RowBytes     int           // payload bytes per row
	Batches      uint64        // batches per epoch per rank
	Epochs       uint64        // 0: endless
	Seed         uint64        //
	Interval     time.Duration // pause between batches of a rank
	DrainTimeout time.Duration // how long to wait at the end for consumers to read everything
	Copy         bool          // copy one pre-made batch into every slot and skip the stream CRC (for benchmarks)
	Empty        bool          // slots hold only the t_ns stamp (handoff benchmarks)
	Log          io.Writer     // progress; nil for none
}

// Result is what one rank published.
type Result struct {
	Rank          int
	Batches, Rows uint64
	CRC           uint32 // CRC-32 of every payload byte published, in order (0 with Copy)
}

func (r Result) String() string {
	return fmt.Sprintf("rank=%d batches=%d rows=%d crc32=%08x", r.Rank, r.Batches, r.Rows, r.CRC)
}

// Spec is the ring layout of one rank.
func (c Config) Spec(rank int) ring.Spec {
	tensors := []ring.TensorSpec{
		{Name: "id", DType: ring.Int64},
		{Name: "payload", DType: ring.Uint8, Shape: []int{c.RowBytes}},
		{Name: "crc", DType: ring.Uint32},
		{Name: "t_ns", DType: ring.Int64},
	}
	if c.Empty {
		tensors = tensors[3:]
	}
	return ring.Spec{Job: c.Job, Rank: rank, Ranks: c.Ranks, SlotCount: c.Depth, BatchCapacity: c.Rows,
		Tensors: tensors, StepsPerEpoch: c.Batches, Epochs: c.Epochs, GlobalBatches: c.Batches * uint64(c.Ranks)}
}

// Run serves the stream until every rank has published its epochs and its consumer has
// drained them (or DrainTimeout passes), or until ctx is cancelled (then the rings are
// marked stopped). The segments are removed before it returns.
func Run(ctx context.Context, c Config) ([]Result, error) {
	if c.Ranks < 1 || c.Rows < 1 || c.RowBytes < 1 || c.Batches < 1 {
		return nil, errors.New("synthetic: ranks, rows, row bytes and batches must be >= 1")
	}
	specs := make([]ring.Spec, c.Ranks)
	for r := range specs {
		specs[r] = c.Spec(r)
	}
	job, prods, err := ring.CreateRings(c.Dir, specs)
	if err != nil {
		return nil, err
	}
	defer job.Close()
	if c.Log != nil {
		fmt.Fprintf(c.Log, "debug-produce: serving job=%s ranks=%d depth=%d rows=%d row_bytes=%d dir=%s\n",
			c.Job, c.Ranks, c.Depth, c.Rows, c.RowBytes, job.Dir)
	}
	results := make([]Result, c.Ranks)
	errs := make([]error, c.Ranks)
	var wg sync.WaitGroup
	for r := range prods {
		wg.Go(func() {
			results[r], errs[r] = c.serveRank(ctx, prods[r], r, job.Segments[r].ConsumerAttached)
			if errs[r] != nil { // stopped by a signal, or failed: consumers see it now
				prods[r].SetState(ring.StateStopped)
			}
		})
	}
	stopProgress := c.progress(prods)
	wg.Wait()
	stopProgress()
	if err := ctx.Err(); err != nil {
		return results, err
	}
	return results, errors.Join(errs...)
}

func (c Config) serveRank(ctx context.Context, p *ring.Producer, rank int, attached func() (bool, error)) (Result, error) {
	res := Result{Rank: rank}
	var tmpl []byte
	var tmplCRC []uint32
	if c.Copy {
		tmpl = make([]byte, c.Rows*c.RowBytes)
		c.fillPayload(tmpl, rank, 0, 0)
		tmplCRC = rowCRCs(tmpl, c.Rows, c.RowBytes)
	}
	var epoch, step, dataEnd uint64 // dataEnd: slots published up to the last data batch
	for {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		s, err := p.Acquire(100 * time.Millisecond)
		if errors.Is(err, ring.ErrTimeout) {
			continue
		}
		if err != nil {
			return res, fmt.Errorf("rank %d: %w", rank, err)
		}
		if e, st, ok := p.PollSeek(); ok {
			epoch, step = e, st
		}
		switch {
		case c.Epochs != 0 && epoch >= c.Epochs:
			p.PublishMarker(s, ring.FlagEndOfStream, epoch)
			p.SetState(ring.StateFinished)
			return res, c.drain(ctx, p, dataEnd, attached)
		case step >= c.Batches:
			p.PublishMarker(s, ring.FlagEndOfEpoch, epoch)
			epoch, step = epoch+1, 0
			continue
		}
		stamp := s.Tensor(0)
		if !c.Empty {
			payload := s.Tensor(1)
			crcs := tmplCRC
			if c.Copy {
				copy(payload, tmpl) // the one copy into the slot
			} else {
				c.fillPayload(payload, rank, epoch, step)
				crcs = rowCRCs(payload, c.Rows, c.RowBytes)
				res.CRC = crc32.Update(res.CRC, crc32.IEEETable, payload)
			}
			c.fillMeta(s, rank, epoch, step, crcs)
			stamp = s.Tensor(3)
		}
		res.Batches++
		res.Rows += uint64(c.Rows)
		binary.LittleEndian.PutUint64(stamp, uint64(MonoNow()))
		p.Publish(s, epoch, step, c.Rows)
		dataEnd = p.Published()
		step++
		pace(c.Interval)
	}
}

// drain waits, for up to DrainTimeout, until the consumer has released everything, or has
// released every batch and gone (one that read only its epochs never takes the final
// end-of-stream marker).
func (c Config) drain(ctx context.Context, p *ring.Producer, dataEnd uint64, attached func() (bool, error)) error {
	deadline := time.Now().Add(c.DrainTimeout)
	for !p.Drained() {
		if p.Released() >= dataEnd {
			if on, err := attached(); err == nil && !on {
				return nil
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("rank %d: consumer did not drain the ring within %v", p.Geometry().Rank, c.DrainTimeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

func (c Config) id(rank int, epoch, step uint64, i int) uint64 {
	return ((epoch*c.Batches+step)*uint64(c.Ranks)+uint64(rank))*uint64(c.Rows) + uint64(i)
}

// fillPayload writes every row's pseudo-random bytes.
func (c Config) fillPayload(dst []byte, rank int, epoch, step uint64) {
	for i := range c.Rows {
		row := dst[i*c.RowBytes : (i+1)*c.RowBytes]
		x := splitmix(c.Seed ^ splitmix(c.id(rank, epoch, step, i)))
		for len(row) >= 8 {
			x = xorshift(x)
			binary.LittleEndian.PutUint64(row, x*0x2545F4914F6CDD1D)
			row = row[8:]
		}
		x = xorshift(x) * 0x2545F4914F6CDD1D
		for k := range row {
			row[k] = byte(x >> (8 * k))
		}
	}
}

// fillMeta writes the id and crc tensors, and clears t_ns.
func (c Config) fillMeta(s *ring.Slot, rank int, epoch, step uint64, crcs []uint32) {
	ids, crcT, ts := s.Tensor(0), s.Tensor(2), s.Tensor(3)
	for i := range c.Rows {
		binary.LittleEndian.PutUint64(ids[8*i:], c.id(rank, epoch, step, i))
		binary.LittleEndian.PutUint32(crcT[4*i:], crcs[i])
		binary.LittleEndian.PutUint64(ts[8*i:], 0)
	}
}

func rowCRCs(payload []byte, rows, rowBytes int) []uint32 {
	out := make([]uint32, rows)
	for i := range out {
		out[i] = crc32.ChecksumIEEE(payload[i*rowBytes : (i+1)*rowBytes])
	}
	return out
}

// pace waits d: short pauses spin, because a sleep that short would oversleep.
func pace(d time.Duration) {
	if d >= time.Millisecond {
		time.Sleep(d)
		return
	}
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

func splitmix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

func xorshift(x uint64) uint64 {
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	return x
}

// progress prints every ring's state to Log every 5 s until the returned func is called.
func (c Config) progress(prods []*ring.Producer) (stop func()) {
	if c.Log == nil || c.Log == io.Discard {
		return func() {}
	}
	done := make(chan struct{})
	t := time.NewTicker(5 * time.Second)
	go func() {
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			for r, p := range prods {
				fmt.Fprintf(c.Log, "debug-produce: rank %d published %d, ring %d/%d full, consumer pid %d\n",
					r, p.Published(), p.Occupancy(), p.Geometry().SlotCount, p.ConsumerPID())
			}
		}
	}()
	return func() { t.Stop(); close(done) }
}

// MonoNow is CLOCK_MONOTONIC in nanoseconds, the clock of the t_ns stamps.
func MonoNow() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}
