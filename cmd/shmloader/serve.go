package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/shmloader/shmloader/internal/units"
	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/producer/plan"
	"github.com/shmloader/shmloader/producer/serve"
	"github.com/shmloader/shmloader/ring"
)

func runServe(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	path := fs.String("config", "", "YAML config file (see --print-config); or give it as the operand CONFIG")
	printConfig := fs.Bool("print-config", false, "print the documented default config and exit")
	var opt serve.Options
	fs.StringVar(&opt.Dir, "dir", "", "segment directory (default $SHMLOADER_SHM_DIR or /dev/shm)")
	fs.Uint64Var(&opt.StartEpoch, "start-epoch", 0, "start every rank at this epoch")
	fs.Uint64Var(&opt.StartStep, "start-step", 0, "start every rank at this step of --start-epoch")
	resume := fs.String("resume", "", "start every rank where a trainer's saved loader.state_dict() (JSON) says")
	fs.DurationVar(&opt.DrainTimeout, "drain-timeout", 0, "how long to wait, after the last epoch, for a rank's trainer to read everything, and for a new trainer when a rank's leaves mid-stream, then exit 1 naming the rank (0: no limit, a trainer may re-attach at any time)")
	quiet := fs.Bool("quiet", false, "print nothing but errors: no start-up summary, status or per-rank lines")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile (go tool pprof) of the run to this file")
	var obs observers
	obs.flags(fs)
	// Overrides of config keys, applied (and checked like the file's values) only when given.
	overrides := map[string]string{}
	for _, o := range []struct{ flag, key, usage string }{
		{"job", "job", "job name"},
		{"dataset", "dataset", "dataset file, directory or glob"},
		{"ranks", "ranks", "rings on this node, one per local GPU"},
		{"node-rank", "node.rank", "this node's rank"},
		{"node-count", "node.count", "number of nodes"},
		{"workers", "workers", "decode workers, 0 = GOMAXPROCS"},
		{"prefetch", "prefetch", "windows decoded ahead"},
		{"cache-dir", "cache.dir", "cache directory on local disk, \"\" = no cache"},
		{"cache-size", "cache.size", "cache size such as 64GiB, 0 = automatic"},
		{"partitions", "partitions", "canonical partitions, 0 = automatic"},
		{"seed", "seed", "shuffle seed"},
		{"epochs", "epochs", "epochs, 0 = endless"},
		{"batch-size", "batch_size", "rows per batch"},
		{"depth", "ring_depth", "slots per ring"},
		{"progress", "progress", "status line period, 0 = off"},
		{"detach-grace", "detach_grace", "every trainer detached: end the job (exit 0) if none attaches within this; 0 or none = wait for ever"},
		{"start-grace", "start_grace", "a rank no trainer attached to: exit 1 naming it after this; 0 or none = wait for ever"},
	} {
		fs.Func(o.flag, fmt.Sprintf("%s (overrides key %s)", o.usage, o.key), func(v string) error {
			overrides[o.key] = v
			return nil
		})
	}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: shmloader serve CONFIG [flags]\n"+
			"       shmloader serve --config CONFIG [flags]\n\n"+
			"Serves a Parquet dataset to the trainer processes of this host, one ring per rank,\n"+
			"until the configured epochs are read or SIGINT/SIGTERM. Flags override config keys.\n"+
			"It writes only to stderr (stdout stays free for the trainers and scripts beside it):\n"+
			"a start-up summary (the dataset, the plan, the tensors, the rings and a memory:\n"+
			"line with what the rings and the decoded windows take), a status line every\n"+
			"--progress, and at the end one line per rank: rank=R batches=N rows=M.\n"+
			"--print-config writes the config to stdout.\n\n")
		printFlags(fs)
		fmt.Fprintf(fs.Output(), "\nEnvironment:\n"+
			"  SHMLOADER_SHM_DIR   segment directory when --dir is not given (default /dev/shm)\n"+
			"  SHMLOADER_DECODER   pages (default: outputs of flat columns decoded page by page\n"+
			"                      straight into the transforms) or arrow (every output through\n"+
			"                      Arrow arrays, flat columns decoded into them by the same page\n"+
			"                      decoder); the bytes served are the same\n"+
			"  SHMLOADER_SPIN_US   microseconds to busy-poll a ring before sleeping (0..1000000; the\n"+
			"                      trainers' C library reads it too)\n")
	}
	// A log line to a reader that went away (a launcher's pipe, `| head`) must not kill
	// serve before it removes its segments: EPIPE instead of SIGPIPE.
	signal.Ignore(syscall.SIGPIPE)
	// Signals are caught from the start: one during start-up stops it cleanly too. The
	// run's cause says which, to the log and to every trainer.
	ctx, stopRun := context.WithCancelCause(context.Background())
	defer stopRun(nil)
	defer onSignal(stopRun)()
	operands, err := parseInterspersed(fs, args, stdout, stderr)
	if err != nil {
		return err
	}
	if *printConfig {
		_, err := io.WriteString(stdout, config.DefaultYAML)
		return err
	}
	if err := configOperand(path, operands); err != nil {
		fs.Usage()
		return err
	}
	log, err := obs.logger(stderr)
	if err != nil {
		return err
	}
	if err := obs.start(func() {
		stopRun(&serve.Ended{Kind: ring.StopSignal, Reason: "stopped: its launcher went away (the control descriptor closed)"})
	}); err != nil {
		return err
	}
	defer obs.stop()
	err = serveConfig(ctx, *path, overrides, *resume, *quiet, *cpuProfile, &opt, &obs, log, stderr)
	obs.fail(err)
	return err
}

// configOperand takes serve's config from its one operand, CONFIG, when --config is not
// given: one of the two is required, and not both.
func configOperand(path *string, operands []string) error {
	switch {
	case len(operands) > 1:
		return usageErrorf("want one CONFIG, got %q", operands)
	case len(operands) == 1 && *path != "":
		return usageErrorf("the config is given twice, as --config %s and as the operand %s: give one", *path, operands[0])
	case len(operands) == 1:
		*path = operands[0]
	case *path == "":
		return usageErrorf("a config is required: shmloader serve CONFIG, or --config CONFIG (shmloader serve --print-config shows one)")
	}
	return nil
}

func serveConfig(ctx context.Context, path string, overrides map[string]string, resume string, quiet bool,
	cpuProfile string, opt *serve.Options, obs *observers, log *slog.Logger, stderr io.Writer) error {
	cfg, err := config.Load(path)
	if err != nil {
		return err
	}
	notes, err := applyLauncherEnv(cfg, overrides, os.Getenv)
	if err != nil {
		return err
	}
	for key, v := range overrides {
		if err := cfg.Set(key, v); err != nil {
			return usageError{fmt.Errorf("flag for %w", err)}
		}
	}
	if resume != "" {
		if opt.StartEpoch != 0 || opt.StartStep != 0 {
			return errors.New("--resume and --start-epoch/--start-step both say where to start: give one")
		}
		if err := readState(resume, opt); err != nil {
			return err
		}
	}
	if quiet {
		log = slog.New(slog.DiscardHandler)
	}
	opt.Logger = log
	opt.Started = func(l *serve.Live) { obs.started(l, log) }
	for _, n := range notes {
		log.Info(n)
	}
	if cpuProfile != "" {
		stopProfile, err := startProfile(cpuProfile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	start := time.Now()
	results, err := serve.Run(ctx, cfg, *opt)
	for _, r := range results {
		// The per-rank lines, on stderr as they are ("rank=R batches=N rows=M"), or as
		// records in a structured log.
		if obs.logFormat != "human" {
			log.Info(r.String(), "rank", r.Rank, "batches", r.Batches, "rows", r.Rows)
		} else if !quiet {
			fmt.Fprintln(stderr, r)
		}
	}
	var end *serve.Ended
	if errors.As(err, &end) && end.Clean() {
		log.Info(end.Reason + "; segments removed")
		return nil
	}
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		log.Info("stopped; segments removed")
		return nil
	}
	if err == nil {
		log.Info(fmt.Sprintf("done in %.1f s, peak RSS %s; segments removed", time.Since(start).Seconds(), units.Bytes(peakRSS())),
			"seconds", time.Since(start).Seconds(), "peak_rss_mib", peakRSS())
	}
	return err
}

// onSignal stops the run on SIGINT or SIGTERM, naming the signal; the returned func
// stops listening.
func onSignal(stop context.CancelCauseFunc) func() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	quit := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			name := map[os.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig]
			stop(&serve.Ended{Kind: ring.StopSignal, Reason: "stopped by " + name})
		case <-quit:
		}
	}()
	return func() { signal.Stop(sigs); close(quit) }
}

// readState reads a trainer's loader.state_dict() saved as JSON.
func readState(path string, opt *serve.Options) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var st struct {
		Epoch       *uint64 `json:"epoch"`
		Step        *uint64 `json:"step"`
		ConfigHash  uint64  `json:"config_hash"`
		PlanVersion int     `json:"plan_version"`
		World       uint64  `json:"world"` // trainers of the job that saved it; 0: this job's
		Base        uint64  `json:"base"`  // global batch its epoch started at
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if st.Epoch == nil || st.Step == nil {
		return fmt.Errorf("%s: want a JSON object with integer \"epoch\" and \"step\" (a saved loader.state_dict())", path)
	}
	if st.PlanVersion != plan.Version {
		saved := fmt.Sprintf("plan version %d", st.PlanVersion)
		if st.PlanVersion == 0 {
			saved = "no plan_version (a shmloader before plan version 2)"
		}
		return fmt.Errorf("%s: the state was saved with %s, this shmloader serves plan version %d, "+
			"in which a step names other rows: resuming would not reproduce the batches (start the epoch again with --start-epoch)",
			path, saved, plan.Version)
	}
	opt.StartEpoch, opt.StartStep, opt.ExpectHash = *st.Epoch, *st.Step, st.ConfigHash
	opt.SavedWorld, opt.StartBase = st.World, st.Base
	return nil
}

func startProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// peakRSS is this process's peak resident set in bytes (shared-memory pages it touched
// included).
func peakRSS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Maxrss << 10 // Linux counts it in KiB
}
