package consumer

import (
	"errors"
	"fmt"
	"hash/crc32"
	"testing"
	"time"

	"github.com/shmloader/shmloader/internal/testkit"
)

// TestStressExactlyOnceInOrder streams a million batches from a producer process and
// checks that every one arrives exactly once, in order, with intact bytes, while the
// consumer holds up to three batches and releases them out of order.
func TestStressExactlyOnceInOrder(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	dir, job := shmDir(t), jobName()
	cfg := producerConfig(dir, job)
	cfg.Rows, cfg.RowBytes, cfg.Batches, cfg.Depth = 1, 24, uint64(n), 16
	p := testkit.Spawn(t, "producer", cfg)

	c, err := Attach(job, 0, Options{Dir: dir, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var crc uint32
	var held []*Batch
	got, epochEnds := 0, 0
	for {
		b, err := c.Next(10 * time.Second)
		if errors.Is(err, ErrEndOfEpoch) {
			epochEnds++
			continue
		}
		if errors.Is(err, ErrEndOfStream) {
			break
		}
		if err != nil {
			t.Fatalf("after %d batches: %v", got, err)
		}
		if b.Seq != uint64(got) || b.Step != uint64(got) || b.Epoch != 0 || b.Rows != 1 {
			t.Fatalf("batch %d arrived as seq %d epoch %d step %d rows %d", got, b.Seq, b.Epoch, b.Step, b.Rows)
		}
		id, _ := b.Tensor("id")
		payload, _ := b.Tensor("payload")
		rowCRC, _ := b.Tensor("crc")
		if id.Int64s()[0] != int64(got) {
			t.Fatalf("batch %d carries id %d", got, id.Int64s()[0])
		}
		if sum := crc32.ChecksumIEEE(payload.Data); sum != rowCRC.Uint32s()[0] {
			t.Fatalf("batch %d: payload crc %08x, producer wrote %08x", got, sum, rowCRC.Uint32s()[0])
		}
		crc = crc32.Update(crc, crc32.IEEETable, payload.Data)
		got++
		held = append(held, b)
		if len(held) == 3 { // release the middle one first, then the others
			for _, k := range []int{1, 0, 2} {
				if err := c.Release(held[k]); err != nil {
					t.Fatal(err)
				}
			}
			held = held[:0]
		}
	}
	for _, b := range held {
		c.Release(b)
	}
	if got != n || epochEnds != 1 {
		t.Fatalf("got %d batches and %d epoch ends, want %d and 1", got, epochEnds, n)
	}
	want := fmt.Sprintf("rank=0 batches=%d rows=%d crc32=%08x", n, n, crc)
	if line := p.Line(t, "rank=0", 30*time.Second); line != want {
		t.Fatalf("producer published %q, consumer saw %q", line, want)
	}
}
