package ring

import (
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func monoNs() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// BenchmarkHandoff: empty batches (one 8-byte stamp) from a producer goroutine to the
// reader. "saturated": the producer runs ahead, ns/op is the per-batch cost. "one-in-flight":
// the producer publishes only once the previous batch is back, so p50/p99-ns is the pure
// stamp-to-receive latency of one batch.
func BenchmarkHandoff(b *testing.B) {
	b.Run("saturated", func(b *testing.B) { benchHandoff(b, false) })
	b.Run("one-in-flight", func(b *testing.B) { benchHandoff(b, true) })
}

func benchHandoff(b *testing.B, oneInFlight bool) {
	p, r, _ := newRing(b, Spec{Job: "bh", Ranks: 1, SlotCount: 64, BatchCapacity: 1,
		Tensors: []TensorSpec{{Name: "t_ns", DType: Int64}}})
	go func() {
		for i := range b.N {
			for oneInFlight && !p.Drained() {
			}
			s, err := p.Acquire(-1)
			if err != nil {
				panic(err)
			}
			binary.LittleEndian.PutUint64(s.Tensor(0), uint64(monoNs()))
			p.Publish(s, 0, uint64(i), 1)
		}
	}()
	lat := make([]int64, 0, b.N)
	off := r.g.Tensors[0].Offset
	b.ResetTimer()
	for range b.N {
		v, _, err := r.Next(10 * time.Second)
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, monoNs()-int64(binary.LittleEndian.Uint64(v.Mem[off:])))
		r.Release(v.Seq)
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2]), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100]), "p99-ns")
}

var sizes = []int{1 << 20, 16 << 20}

const throughputDepth = 4

// BenchmarkThroughput: the producer copies a batch into the slot (its one copy); the
// reader takes the view ("view") or also reads every byte ("touch"). Compare MB/s with
// BenchmarkMemcpy of the same size.
func BenchmarkThroughput(b *testing.B) {
	for _, size := range sizes {
		for _, touch := range []bool{false, true} {
			b.Run(fmt.Sprintf("%dMiB/%s", size>>20, map[bool]string{false: "view", true: "touch"}[touch]), func(b *testing.B) {
				benchThroughput(b, size, touch)
			})
		}
	}
}

func benchThroughput(b *testing.B, size int, touch bool) {
	{
		{
			p, r, _ := newRing(b, Spec{Job: "bt", Ranks: 1, SlotCount: throughputDepth, BatchCapacity: 1,
				Tensors: []TensorSpec{{Name: "x", DType: Uint8, Shape: []int{size}}}})
			src := make([]byte, size)
			for i := range src {
				src[i] = byte(i)
			}
			b.SetBytes(int64(size))
			go func() {
				for i := range b.N {
					s, err := p.Acquire(-1)
					if err != nil {
						panic(err)
					}
					copy(s.Tensor(0), src)
					p.Publish(s, 0, uint64(i), 1)
				}
			}()
			off := r.g.Tensors[0].Offset
			var sink uint64
			b.ResetTimer()
			for range b.N {
				v, _, err := r.Next(10 * time.Second)
				if err != nil {
					b.Fatal(err)
				}
				if touch {
					sink += sumWords(v.Mem[off : off+uint64(size)])
				} else {
					sink += uint64(v.Mem[off])
				}
				r.Release(v.Seq)
			}
			_ = sink
		}
	}
}

// BenchmarkMemcpy is the ceiling: one plain copy of the same bytes, into one destination
// ("hot": it stays in cache when it fits) or in turn into as many destinations as the
// ring has slots ("rotating": what writing a ring of that depth has to do).
func BenchmarkMemcpy(b *testing.B) {
	for _, size := range sizes {
		for _, n := range []int{1, throughputDepth} {
			name := map[bool]string{true: "hot", false: "rotating"}[n == 1]
			b.Run(fmt.Sprintf("%dMiB/%s", size>>20, name), func(b *testing.B) {
				src := make([]byte, size)
				dst := make([][]byte, n)
				for i := range dst {
					dst[i] = make([]byte, size)
				}
				b.SetBytes(int64(size))
				for i := range b.N {
					copy(dst[i%n], src)
				}
			})
		}
	}
}

func sumWords(b []byte) uint64 {
	var s uint64
	for _, w := range unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), len(b)/8) {
		s += w
	}
	return s
}
