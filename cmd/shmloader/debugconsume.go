package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"time"
	"unsafe"

	"github.com/shmloader/shmloader/consumer"
	"github.com/shmloader/shmloader/producer/synthetic"
)

// runDebugConsume reads a debug-produce stream and reports handoff latency (from the
// producer's t_ns stamp to the return of Next) and delivered bytes per second.
func runDebugConsume(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("debug-consume", flag.ContinueOnError)
	job := fs.String("job", "", "job name (required)")
	rank := fs.Int("rank", 0, "rank to read")
	dir := fs.String("dir", "", "segment directory (default $SHMLOADER_SHM_DIR or /dev/shm)")
	batches := fs.Int("batches", 100000, "batches to measure")
	warmup := fs.Int("warmup", 1000, "batches to skip before measuring")
	touch := fs.Bool("touch", false, "read every byte of every tensor")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: shmloader debug-consume --job NAME [flags]\n\n"+
			"Reads a debug-produce stream; prints one line of handoff latency and throughput.\n\n")
		printFlags(fs)
	}
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if *job == "" || fs.NArg() > 0 {
		fs.Usage()
		return usageErrorf("--job NAME is required, and there are no operands")
	}
	if *batches < 1 || *warmup < 0 {
		return usageErrorf("--batches must be >= 1 and --warmup >= 0")
	}
	c, err := consumer.Attach(*job, *rank, consumer.Options{Dir: *dir, Timeout: 30 * time.Second})
	if err != nil {
		return err
	}
	defer c.Close()
	lat := make([]int64, 0, *batches)
	var bytes uint64
	var sink uint64
	var start time.Time
	for n := 0; n < *warmup+*batches; {
		b, err := c.Next(10 * time.Second)
		if errors.Is(err, consumer.ErrEndOfEpoch) {
			continue
		}
		if err != nil {
			return err
		}
		now := synthetic.MonoNow()
		if n == *warmup {
			start = time.Now()
		}
		if n >= *warmup {
			if ts, ok := b.Tensor("t_ns"); ok && len(ts.Data) >= 8 {
				lat = append(lat, now-int64(binary.LittleEndian.Uint64(ts.Data)))
			}
			for _, t := range b.Tensors {
				bytes += uint64(len(t.Data))
				if *touch {
					sink += sum(t.Data)
				}
			}
		}
		c.Release(b)
		n++
	}
	secs := time.Since(start).Seconds()
	if len(lat) == 0 {
		return errors.New("the stream has no t_ns tensor to measure latency with")
	}
	slices.Sort(lat)
	fmt.Fprintf(stdout, "consumer=go batches=%d median_ns=%d p99_ns=%d ns_per_batch=%.0f bytes_per_s=%.0f sink=%d\n",
		len(lat), lat[len(lat)/2], lat[len(lat)*99/100], secs*1e9/float64(len(lat)), float64(bytes)/secs, sink&1)
	return nil
}

// sum reads every byte, 8 at a time.
func sum(b []byte) uint64 {
	var s uint64
	n := len(b) / 8
	if n > 0 {
		for _, w := range unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), n) {
			s += w
		}
	}
	for _, c := range b[n*8:] {
		s += uint64(c)
	}
	return s
}
