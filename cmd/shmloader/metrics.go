package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/shmloader/shmloader/producer/serve"
)

// Metrics of a running serve, in the Prometheus text format at /metrics. Every series
// of a ring has the labels job and rank; the others job. docs/operations.md "Metrics"
// lists them.
type metric struct {
	name, kind, help string
	ring             func(r serve.RingSnapshot) float64 // per ring, or
	job              func(s serve.Snapshot) (float64, bool)
}

var metrics = []metric{
	{name: "shmloader_rows_total", kind: "counter", help: "Rows published into the ring.", ring: func(r serve.RingSnapshot) float64 { return float64(r.RowsOut) }},
	{name: "shmloader_rows_read_total", kind: "counter", help: "Rows trainers took from the ring.", ring: func(r serve.RingSnapshot) float64 { return float64(r.RowsIn) }},
	{name: "shmloader_batches_total", kind: "counter", help: "Batches published into the ring.", ring: func(r serve.RingSnapshot) float64 { return float64(r.Batches) }},
	{name: "shmloader_bytes_total", kind: "counter", help: "Tensor bytes published into the ring.", ring: func(r serve.RingSnapshot) float64 { return float64(r.Bytes) }},
	{name: "shmloader_producer_wait_seconds_total", kind: "counter", help: "Time serve waited for a free slot (the trainer is the slower side).", ring: func(r serve.RingSnapshot) float64 { return r.ProducerWaitS }},
	{name: "shmloader_consumer_wait_seconds_total", kind: "counter", help: "Time trainers waited for a batch (the data stall).", ring: func(r serve.RingSnapshot) float64 { return r.ConsumerWaitS }},
	{name: "shmloader_ring_occupancy", kind: "gauge", help: "Published slots not yet released.", ring: func(r serve.RingSnapshot) float64 { return float64(r.Occupancy) }},
	{name: "shmloader_ring_slots", kind: "gauge", help: "Slots of the ring.", ring: func(r serve.RingSnapshot) float64 { return float64(r.Slots) }},
	{name: "shmloader_epoch", kind: "gauge", help: "Epoch of the last batch a trainer took.", ring: func(r serve.RingSnapshot) float64 { return float64(r.Epoch) }},
	{name: "shmloader_step", kind: "gauge", help: "Step after the last batch a trainer took.", ring: func(r serve.RingSnapshot) float64 { return float64(r.Step) }},
	{name: "shmloader_steps_per_epoch", kind: "gauge", help: "Batches of an epoch for the rank.", ring: func(r serve.RingSnapshot) float64 { return float64(r.StepsPerEpoch) }},
	{name: "shmloader_trainer_attached", kind: "gauge", help: "1 while a trainer is attached to the ring.", ring: func(r serve.RingSnapshot) float64 { return b2f(r.ConsumerPID != 0) }},
	{name: "shmloader_decoded_rows_total", kind: "counter", help: "Rows decoded from Parquet (cache misses).", job: func(s serve.Snapshot) (float64, bool) { return float64(s.DecodedRows), true }},
	{name: "shmloader_cached_rows_total", kind: "counter", help: "Rows read from the cache.", job: func(s serve.Snapshot) (float64, bool) { return float64(s.CachedRows), true }},
	{name: "shmloader_decode_cpu_seconds_total", kind: "counter", help: "CPU time (user and system) decode workers spent decoding Parquet (cache misses).", job: func(s serve.Snapshot) (float64, bool) { return s.DecodeCPUSeconds, true }},
	{name: "shmloader_workers", kind: "gauge", help: "Decode workers.", job: func(s serve.Snapshot) (float64, bool) { return float64(s.Workers), true }},
	{name: "shmloader_cache_hits_total", kind: "counter", help: "Row groups served from the cache.", job: cacheFig(func(c *serve.CacheSnapshot) int64 { return c.Hits })},
	{name: "shmloader_cache_misses_total", kind: "counter", help: "Row groups the cache did not hold (decoded).", job: cacheFig(func(c *serve.CacheSnapshot) int64 { return c.Misses })},
	{name: "shmloader_cache_hit_bytes_total", kind: "counter", help: "Bytes served from the cache.", job: cacheFig(func(c *serve.CacheSnapshot) int64 { return c.HitBytes })},
	{name: "shmloader_cache_written_total", kind: "counter", help: "Cache entries written.", job: cacheFig(func(c *serve.CacheSnapshot) int64 { return c.Written })},
	{name: "shmloader_cache_evictions_total", kind: "counter", help: "Cache entries evicted to admit others.", job: cacheFig(func(c *serve.CacheSnapshot) int64 { return c.Evictions })},
	{name: "shmloader_cache_bytes", kind: "gauge", help: "Bytes of committed cache entries.", job: cacheFig(func(c *serve.CacheSnapshot) int64 { return c.ResidentBytes })},
	{name: "shmloader_cache_budget_bytes", kind: "gauge", help: "The cache's size.", job: cacheFig(func(c *serve.CacheSnapshot) int64 { return c.BudgetBytes })},
	{name: "shmloader_uptime_seconds", kind: "gauge", help: "Seconds since serve started.", job: func(s serve.Snapshot) (float64, bool) { return s.Time.Sub(s.Started).Seconds(), true }},
}

func cacheFig(f func(*serve.CacheSnapshot) int64) func(serve.Snapshot) (float64, bool) {
	return func(s serve.Snapshot) (float64, bool) {
		if s.Cache == nil {
			return 0, false
		}
		return float64(f(s.Cache)), true
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// writeMetrics writes snap in the Prometheus text exposition format (version 0.0.4).
func writeMetrics(w io.Writer, snap serve.Snapshot) {
	var b strings.Builder
	job := labelValue(snap.Job)
	for _, m := range metrics {
		if m.job != nil {
			v, ok := m.job(snap)
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n%s{job=\"%s\"} %g\n", m.name, m.help, m.name, m.kind, m.name, job, v)
			continue
		}
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", m.name, m.help, m.name, m.kind)
		for _, r := range snap.Rings {
			fmt.Fprintf(&b, "%s{job=\"%s\",rank=\"%d\"} %g\n", m.name, job, r.Rank, m.ring(r))
		}
	}
	io.WriteString(w, b.String())
}

func labelValue(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// startMetrics serves /metrics on addr ("off": none) and returns the address it listens
// on (a port 0 in addr picks a free one).
func startMetrics(addr string, live func() *serve.Live) (string, func(), error) {
	if addr == "off" || addr == "" {
		return "", func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("--metrics %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		l := live()
		if l == nil {
			http.Error(w, "serve is starting: no rings yet", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		writeMetrics(w, l.Snapshot())
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "shmloader serve: metrics at /metrics\n")
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // returns ErrServerClosed at stop
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}
	return ln.Addr().String(), stop, nil
}
