package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shmloader/shmloader/internal/units"
	"github.com/shmloader/shmloader/producer/serve"
	"github.com/shmloader/shmloader/ring"
	"github.com/shmloader/shmloader/shm"
)

func runStatus(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	dir := fs.String("dir", "", "segment directory (default $SHMLOADER_SHM_DIR or /dev/shm)")
	once := fs.Bool("once", false, "print once and exit (the default when stdout is not a terminal)")
	asJSON := fs.Bool("json", false, "print one JSON document and exit")
	interval := new(time.Duration)
	*interval = time.Second
	fs.Func("interval", "refresh period, and the span rates are measured over: seconds (0.5) or a duration (500ms) (default 1s)", func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			f, ferr := strconv.ParseFloat(v, 64)
			if ferr != nil {
				return errors.New("want seconds (0.5) or a duration (500ms)")
			}
			d = time.Duration(f * float64(time.Second))
		}
		*interval = d
		return nil
	})
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: shmloader status [JOB] [flags]\n\n"+
			"Shows a running job: per ring the trainer's epoch and step (serve's in SERVED), ring\n"+
			"occupancy, how long serve and the trainer waited for each other, rows/s, and the\n"+
			"cache's figures.\n"+
			"Refreshes in a terminal; --once or --json print once. Without JOB, lists the live jobs,\n"+
			"then the jobs whose producer died and left files, with the command that removes them.\n"+
			"A JOB without a live producer exits 1, saying what a dead one left.\n\n")
		printFlags(fs)
	}
	pos, err := parseInterspersed(fs, args, stdout, stderr) // flags before or after JOB
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		fs.Usage()
		return usageErrorf("one JOB at most, got %q", pos)
	}
	if *interval <= 0 {
		fs.Usage()
		return usageErrorf("--interval %v: want more than 0", *interval)
	}
	d := shm.Dir(*dir)
	if len(pos) == 0 {
		return listJobs(stdout, d, *asJSON)
	}
	job := pos[0]
	if err := shm.ValidateJob(job); err != nil {
		return err
	}
	live := !*once && !*asJSON && isTerminal(stdout)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	prev, err := observe(d, job)
	for tries := 0; errors.Is(err, errStarting) && tries < 50; tries++ {
		time.Sleep(100 * time.Millisecond)
		prev, err = observe(d, job)
	}
	if errors.Is(err, errNotLive) {
		if dead := deadJobStatus(stdout, d, job, *asJSON); dead != nil {
			return dead
		}
	}
	if err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(*interval):
		}
		cur, err := observe(d, job)
		if live && errors.Is(err, errStarting) {
			continue
		}
		if err != nil {
			if live && errors.Is(err, errNotLive) {
				fmt.Fprintf(stdout, "\njob %q ended\n", job)
				return nil
			}
			return err
		}
		view := compare(prev, cur)
		switch {
		case *asJSON:
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(view)
		case !live:
			printView(stdout, view)
			return nil
		}
		fmt.Fprint(stdout, "\x1b[H\x1b[2J")
		printView(stdout, view)
		prev = cur
	}
}

var errNotLive = errors.New("no live producer")

// observation is one look at a job: its rings' headers, and serve's status file.
type observation struct {
	at     time.Time
	pid    int
	status *statusFile // nil if serve has not written one (or it could not be read)
	rings  []ringLook
}

type ringLook struct {
	rank     int
	g        *ring.Geometry
	c        ring.Counters
	consumer uint32
	waits    string // the stall note its trainer reads: why the rank has no batch
}

// observe maps each of the job's segments read-only, validates it as a consumer would,
// and reads its counters; the status file adds serve's figures.
func observe(dir, job string) (*observation, error) {
	jobs, err := shm.LiveJobs(dir)
	if err != nil {
		return nil, err
	}
	var found *shm.LiveJob
	for i := range jobs {
		if jobs[i].Name == job {
			found = &jobs[i]
		}
	}
	if found == nil {
		return nil, fmt.Errorf("job %q: %w in %s; live jobs: %s", job, errNotLive, dir, jobNames(jobs))
	}
	pid, _ := strconv.Atoi(found.PID)
	o := &observation{at: time.Now(), pid: pid}
	for _, r := range found.Ranks {
		look, err := lookAt(dir, job, r)
		if err != nil {
			// A job that ends removes its segments before its lock, and one that starts
			// creates them before it writes their headers: say which.
			if !jobLive(dir, job) {
				return nil, fmt.Errorf("job %q: %w (it ended)", job, errNotLive)
			}
			if errors.Is(err, ring.ErrNotReady) || errors.Is(err, shm.ErrNotFound) {
				return nil, fmt.Errorf("job %q is starting: %w", job, errStarting)
			}
			return nil, err
		}
		o.rings = append(o.rings, look)
	}
	// The status file of this producer only: one a killed producer left is not its.
	if st, err := readStatus(dir, job); err == nil && st.Snapshot.PID == pid {
		o.status = st
	}
	return o, nil
}

var errStarting = errors.New("its rings are not ready yet")

func lookAt(dir, job string, rank int) (ringLook, error) {
	seg, err := shm.OpenReadOnly(shm.SegmentPath(dir, os.Getuid(), job, rank))
	if err != nil {
		return ringLook{}, err
	}
	defer seg.Close()
	g, err := ring.Validate(seg.Mem, job, rank)
	if err != nil {
		return ringLook{}, fmt.Errorf("job %q rank %d: %w", job, rank, err)
	}
	c := ring.ReadCounters(seg.Mem, g)
	if on, err := seg.ConsumerAttached(); err == nil && !on {
		c.ConsumerPID = 0 // the header's pid outlives a trainer that died or did not detach
	}
	return ringLook{rank: rank, g: g, c: c, consumer: c.ConsumerPID, waits: ring.ReadNotes(seg.Mem).Stall}, nil
}

func jobLive(dir, job string) bool {
	jobs, err := shm.LiveJobs(dir)
	if err != nil {
		return true // cannot tell: report the original error
	}
	for _, j := range jobs {
		if j.Name == job {
			return true
		}
	}
	return false
}

func jobNames(jobs []shm.LiveJob) string {
	if len(jobs) == 0 {
		return "none"
	}
	names := make([]string, len(jobs))
	for i, j := range jobs {
		names[i] = j.Name
	}
	return strings.Join(names, ", ")
}

// statusView is what status prints, and its --json document.
type statusView struct {
	Job      string    `json:"job"`
	PID      int       `json:"pid"`
	Time     time.Time `json:"time"`
	Span     float64   `json:"span_s"` // seconds the rates are measured over
	Metrics  string    `json:"metrics,omitempty"`
	UptimeS  float64   `json:"uptime_s,omitempty"`
	Epochs   uint64    `json:"epochs"`
	Workers  int       `json:"workers,omitempty"`
	RowsPerS float64   `json:"rows_per_s"`
	// From serve's status file, rewritten each second: null until two of its versions were
	// seen (a span under a second may see one).
	DecodeRate  *float64             `json:"decoded_rows_per_s"`
	DecodeCores *float64             `json:"decode_cpu_cores"` // CPU-seconds decoding per second
	Cache       *serve.CacheSnapshot `json:"cache"`
	Rings       []ringView           `json:"rings"`
}

type ringView struct {
	Rank            int     `json:"rank"`
	Epoch           uint64  `json:"epoch"` // the trainer's: after the last batch it took
	Step            uint64  `json:"step"`
	ServedEpoch     uint64  `json:"served_epoch"` // serve's: after the last batch it published
	ServedStep      uint64  `json:"served_step"`
	StepsPerEpoch   uint64  `json:"steps_per_epoch"`
	Occupancy       uint64  `json:"occupancy"`
	Slots           uint32  `json:"slots"`
	ProducerWaitPct float64 `json:"producer_wait_pct"`
	ConsumerWaitPct float64 `json:"consumer_wait_pct"`
	RowsPerS        float64 `json:"rows_per_s"`
	RowsRead        uint64  `json:"rows_read"`
	TrainerPID      uint32  `json:"trainer_pid"`     // 0: no trainer attached
	Waits           string  `json:"waits,omitempty"` // why the rank has no batch, as its trainer is told
}

func compare(a, b *observation) statusView {
	dt := b.at.Sub(a.at).Seconds()
	v := statusView{PID: b.pid, Time: b.at, Span: dt}
	if len(b.rings) > 0 {
		v.Job, v.Epochs = b.rings[0].g.Job, b.rings[0].g.Epochs
	}
	for i, r := range b.rings {
		rv := ringView{Rank: r.rank, Epoch: r.c.ConsEpoch, Step: r.c.ConsStep, StepsPerEpoch: r.g.StepsPerEpoch,
			ServedEpoch: r.c.PubEpoch, ServedStep: r.c.PubStep,
			Occupancy: r.c.Occupancy, Slots: r.g.SlotCount, RowsRead: r.c.RowsIn, TrainerPID: r.consumer, Waits: r.waits}
		if i < len(a.rings) && a.rings[i].rank == r.rank && dt > 0 {
			p := a.rings[i].c
			rv.ProducerWaitPct = pct((r.c.ProducerWait - p.ProducerWait).Seconds(), dt)
			rv.ConsumerWaitPct = pct((r.c.ConsumerWait - p.ConsumerWait).Seconds(), dt)
			rv.RowsPerS = float64(r.c.RowsIn-p.RowsIn) / dt
		}
		v.RowsPerS += rv.RowsPerS
		v.Rings = append(v.Rings, rv)
	}
	if st := b.status; st != nil {
		s := st.Snapshot
		v.Metrics, v.UptimeS, v.Workers, v.Cache = st.Metrics, s.Time.Sub(s.Started).Seconds(), s.Workers, s.Cache
		if a.status != nil && dt > 0 {
			ps := a.status.Snapshot
			if span := s.Time.Sub(ps.Time).Seconds(); span > 0 {
				rate, cores := float64(s.DecodedRows-ps.DecodedRows)/span, (s.DecodeCPUSeconds-ps.DecodeCPUSeconds)/span
				v.DecodeRate, v.DecodeCores = &rate, &cores
			}
		}
	}
	return v
}

func pct(part, whole float64) float64 { return max(0, min(100, 100*part/whole)) }

func printView(w io.Writer, v statusView) {
	epochs := fmt.Sprint(v.Epochs)
	if v.Epochs == 0 {
		epochs = "endless"
	}
	fmt.Fprintf(w, "job %s  pid %d  epochs %s", v.Job, v.PID, epochs)
	if v.UptimeS > 0 {
		fmt.Fprintf(w, "  up %s  workers %d", time.Duration(v.UptimeS*float64(time.Second)).Round(time.Second), v.Workers)
	}
	if v.Metrics != "" {
		fmt.Fprintf(w, "  metrics http://%s/metrics", v.Metrics)
	}
	decode := "- (measured over a second or more)"
	if v.DecodeRate != nil {
		decode = fmt.Sprintf("%s rows/s (%.1f cores of CPU)", si(*v.DecodeRate), *v.DecodeCores)
	}
	fmt.Fprintf(w, "\nread %s rows/s  decode %s\n", si(v.RowsPerS), decode)
	if c := v.Cache; c != nil {
		hit := 0.0
		if c.Hits+c.Misses > 0 {
			hit = 100 * float64(c.Hits) / float64(c.Hits+c.Misses)
		}
		fmt.Fprintf(w, "cache %s: %s of %s (this node's data %s), %d entries, hits %d misses %d (%.0f%%), evictions %d\n",
			c.Dir, units.Bytes(c.ResidentBytes), units.Bytes(c.BudgetBytes), units.Bytes(c.NodeBytes), c.Entries, c.Hits, c.Misses, hit, c.Evictions)
	} else {
		fmt.Fprintln(w, "cache: off")
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RANK\tEPOCH\tSTEP\tSERVED\tRING\tSERVE WAIT\tTRAINER WAIT\tROWS/S\tTRAINER")
	for _, r := range v.Rings {
		trainer := "none attached"
		if r.TrainerPID != 0 {
			trainer = fmt.Sprintf("pid %d", r.TrainerPID)
		}
		fmt.Fprintf(tw, "%d\t%d\t%d/%d\te%d %d\t%d/%d\t%.0f%%\t%.0f%%\t%s\t%s\n", r.Rank, r.Epoch, r.Step, r.StepsPerEpoch,
			r.ServedEpoch, r.ServedStep, r.Occupancy, r.Slots, r.ProducerWaitPct, r.ConsumerWaitPct, si(r.RowsPerS), trainer)
	}
	tw.Flush()
	for _, r := range v.Rings {
		if r.Waits != "" {
			fmt.Fprintln(w, r.Waits)
		}
	}
}

func listJobs(w io.Writer, dir string, asJSON bool) error {
	jobs, err := shm.LiveJobs(dir)
	if err != nil {
		return err
	}
	type entry struct {
		Job     string `json:"job"`
		State   string `json:"state"` // "live"; a deadView's is "dead"
		PID     int    `json:"pid"`
		Ranks   []int  `json:"ranks"`
		Metrics string `json:"metrics,omitempty"`
	}
	out := []entry{}
	for _, j := range jobs {
		pid, _ := strconv.Atoi(j.PID)
		e := entry{Job: j.Name, State: "live", PID: pid, Ranks: j.Ranks}
		if st, err := readStatus(dir, j.Name); err == nil && st.Snapshot.PID == pid {
			e.Metrics = st.Metrics
		}
		out = append(out, e)
	}
	dead, err := deadJobs(dir)
	if err != nil {
		return err
	}
	if asJSON {
		all := []any{}
		for _, e := range out {
			all = append(all, e)
		}
		for _, v := range dead {
			all = append(all, v)
		}
		return json.NewEncoder(w).Encode(all)
	}
	if len(out) == 0 {
		fmt.Fprintf(w, "no live jobs in %s\n", dir)
		return printDeadJobs(w, dir, dead)
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tPID\tRANKS\tMETRICS")
	for _, e := range out {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", e.Job, e.PID, len(e.Ranks), e.Metrics)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return printDeadJobs(w, dir, dead)
}

func si(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.2fG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fK", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
