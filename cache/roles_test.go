package cache

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// roleCfg configures a child process.
type roleCfg struct {
	Dir    string
	Size   int64
	Shards int
	Seed   uint64
	Start  int // first key index
	Keys   int // key indexes Start … Start+Keys-1
	Ops    int
}

// sizesOf gives each key its own tensor sizes, so entries differ in size.
func sizesOf(k Key) []int64 { return []int64{int64(k[0])*97 + 1000, int64(k[1]) * 13} }

func runRole(role, raw string) {
	var cfg roleCfg
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Println("error", err)
		return
	}
	if role == "fsize" {
		runFsize(cfg)
		return
	}
	c, err := Open(Options{Dir: cfg.Dir, Size: cfg.Size, Shards: cfg.Shards,
		Log: func(f string, a ...any) { fmt.Fprintf(os.Stderr, "child %d: "+f+"\n", append([]any{pid}, a...)...) }})
	if err != nil {
		fmt.Println("error", err)
		return
	}
	defer c.Close()
	switch role {
	case "write":
		for i := cfg.Start; i < cfg.Start+cfg.Keys; i++ {
			childPut(c, key(i))
		}
		fmt.Println("done")
	case "read":
		hits := 0
		for i := cfg.Start; i < cfg.Start+cfg.Keys; i++ {
			if childGet(c, key(i)) {
				hits++
			}
		}
		fmt.Println("hits", hits)
	case "mixed":
		rng := rand.New(rand.NewPCG(cfg.Seed, 1))
		for range cfg.Ops {
			k := key(cfg.Start + rng.IntN(cfg.Keys))
			if !childGet(c, k) {
				childPut(c, k)
			}
		}
		b, _ := json.Marshal(c.Stats())
		fmt.Println("stats", string(b))
	case "hang-writer":
		childPut(c, key(cfg.Start))
		w, err := c.Create(key(cfg.Start+1), Meta{}, sizesOf(key(cfg.Start+1)))
		if err != nil {
			fmt.Println("error", err)
			return
		}
		ts := w.Tensors()
		fill(key(cfg.Start+1), ts[:1]) // half written
		fmt.Println("writing")
		time.Sleep(time.Hour)
	case "hang-rename":
		testHookRenamed = func() {
			fmt.Println("renamed")
			time.Sleep(time.Hour)
		}
		childPut(c, key(cfg.Start))
	case "holder":
		fmt.Println("open", pid)
		time.Sleep(time.Hour)
	}
}

// childPut writes key k's pattern; a refusal is fine, other errors are reported.
func childPut(c *Cache, k Key) {
	w, err := c.Create(k, Meta{Config: fmt.Sprintf("p%d", pid), Label: k.String()[:8], Rows: 1}, sizesOf(k))
	if errors.Is(err, ErrNotAdmitted) {
		return
	}
	if err != nil {
		fmt.Println("error create:", err)
		return
	}
	fill(k, w.Tensors())
	e, err := w.Commit()
	if err != nil {
		fmt.Println("error commit:", err)
		return
	}
	e.Close()
}

// childGet reads k and reports BAD if a served entry does not hold k's pattern.
func childGet(c *Cache, k Key) bool {
	e, ok := c.Get(k)
	if !ok {
		return false
	}
	defer e.Close()
	if err := intact(k, e, sizesOf(k)); err != nil {
		fmt.Println("BAD", k, err)
	}
	return true
}

// runFsize creates an entry larger than RLIMIT_FSIZE allows: fallocate fails with EFBIG
// (Go ignores SIGXFSZ), which is how a full disk looks where tmpfs cannot be mounted.
func runFsize(cfg roleCfg) {
	lim := unix.Rlimit{Cur: 1 << 20, Max: 1 << 20}
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &lim); err != nil {
		fmt.Println("error setrlimit", err)
		return
	}
	c, err := Open(Options{Dir: cfg.Dir, Size: cfg.Size, Shards: 1})
	if err != nil {
		fmt.Println("error", err)
		return
	}
	defer c.Close()
	_, err = c.Create(key(1), Meta{}, []int64{4 << 20})
	fmt.Println("nospace", errors.Is(err, ErrNoSpace), c.Stats().WriteErrors, err)
}
