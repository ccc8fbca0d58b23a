package cache

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shmloader/shmloader/internal/testkit"
)

func TestListDescribesTheDir(t *testing.T) {
	dir := t.TempDir()
	c, _ := openCache(t, dir, 64<<20, 2)
	for i := range 5 {
		w, err := c.Create(key(i), Meta{Config: fmt.Sprint("cfg", i%2), Label: fmt.Sprint("rg ", i), Rows: 1}, []int64{100})
		if err != nil {
			t.Fatal(err)
		}
		e, _ := w.Commit()
		e.Close()
	}
	open, err := c.Create(key(50), Meta{}, []int64{100}) // in flight
	if err != nil {
		t.Fatal(err)
	}
	defer open.Abort()
	s0 := filepath.Join(dir, "s00")
	os.WriteFile(filepath.Join(s0, key(51).String()+".77.1.8192.tmp"), nil, 0o644) // dead writer's
	os.WriteFile(filepath.Join(s0, "junk"), []byte("x"), 0o644)
	old := key(52) // an entry of another format version, made elsewhere and copied in
	other, _ := openCache(t, t.TempDir(), 64<<20, 2)
	put(t, other, old, 10)
	b, _ := os.ReadFile(filepath.Join(other.Dir(), shardName(old.shard(2)), entryName(old)))
	b[offVersion] = 9
	oldPath := filepath.Join(dir, shardName(old.shard(2)), entryName(old))
	os.WriteFile(oldPath, b, 0o644)

	l, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	if l.Format != FormatVersion || l.Shards != 2 || l.Entries != 5 || l.Bytes != 5*(headerSize+100) {
		t.Fatalf("totals: %+v", l)
	}
	if len(l.Configs) != 2 || l.Configs[0].Config != "cfg0" || l.Configs[0].Entries != 3 || len(l.Configs[0].Labels) != 3 {
		t.Fatalf("configs: %+v", l.Configs)
	}
	if len(l.Temps) != 2 || len(l.Corrupt) != 1 {
		t.Fatalf("temps %+v, corrupt %v", l.Temps, l.Corrupt)
	}
	live := 0
	for _, tf := range l.Temps {
		if tf.Live {
			live++
			if tf.Pid != os.Getpid() {
				t.Errorf("live temp pid %d, want %d", tf.Pid, os.Getpid())
			}
		}
	}
	if live != 1 {
		t.Fatalf("temps %+v: want one live", l.Temps)
	}
	out := l.String()
	for _, want := range []string{dir, "5 entries", "cfg0", "rg 0", "s01", "being written", "dead process", "junk"} {
		if !strings.Contains(out, want) {
			t.Errorf("listing lacks %q:\n%s", want, out)
		}
	}
	if len(l.OtherVersion) != 1 || l.OtherVersion[0] != oldPath {
		t.Fatalf("other versions %v", l.OtherVersion)
	}
	t.Logf("\n%s", l)
	if _, err := List(t.TempDir()); !errors.Is(err, ErrNotCache) {
		t.Fatalf("List of an empty dir: %v", err)
	}
}

func TestClearRefusesWhileOpenAndNamesThePid(t *testing.T) {
	dir := t.TempDir()
	c, _ := openCache(t, dir, 64<<20, 2)
	put(t, c, key(1), 10)
	err := Clear(dir)
	if !errors.Is(err, ErrLive) || !strings.Contains(err.Error(), fmt.Sprint(os.Getpid())) {
		t.Fatalf("Clear while open here: %v", err)
	}
	c.Close()
	p := testkit.Spawn(t, "holder", roleCfg{Dir: dir, Size: 1 << 20, Shards: 2})
	child := pidOf(t, p.Line(t, "open", 20*time.Second))
	err = Clear(dir)
	if !errors.Is(err, ErrLive) || !strings.Contains(err.Error(), fmt.Sprint(child)) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Clear while a child has it open: %v", err)
	}
	p.Kill()
	if err := Clear(dir); err != nil {
		t.Fatal(err)
	}
	names, _ := os.ReadDir(dir)
	if len(names) != 1 || names[0].Name() != dirLock {
		t.Fatalf("after Clear: %v", names)
	}
	c2, _ := openCache(t, dir, 64<<20, 3) // a fresh dir: the new shard count holds
	if c2.Shards() != 3 {
		t.Fatalf("shards %d", c2.Shards())
	}
	mustMiss(t, c2, key(1))
	if err := Clear(t.TempDir()); !errors.Is(err, ErrNotCache) {
		t.Fatalf("Clear of a dir that is no cache: %v", err)
	}
}

// A Clear stopped at any of its steps (a crash) leaves a dir that Open accepts, serves
// nothing bad from, and that a second Clear finishes emptying.
func TestClearStoppedAtAnyStepLeavesAnOpenableDir(t *testing.T) {
	type crash struct{}
	for step := 0; ; step++ {
		dir := t.TempDir()
		c, _ := openCache(t, dir, 64<<20, 2)
		for i := range 4 {
			put(t, c, key(i), 100)
		}
		w, _ := c.Create(key(9), Meta{}, []int64{10})
		w.Abort()
		c.Close()
		n := 0
		testHookClear = func(string) {
			if n == step {
				panic(crash{})
			}
			n++
		}
		finished := func() (done bool) {
			defer func() {
				if r := recover(); r != nil {
					if _, ok := r.(crash); !ok {
						panic(r)
					}
				}
			}()
			if err := Clear(dir); err != nil {
				t.Fatal(err)
			}
			return true
		}()
		testHookClear = nil
		c, _ = openCache(t, dir, 64<<20, 2)
		for i := range 4 {
			if e, ok := c.Get(key(i)); ok {
				if err := intact(key(i), e, []int64{100}); err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				e.Close()
			}
		}
		if s := c.Stats(); s.Corrupt != 0 {
			t.Fatalf("crash at step %d: Open found %d corrupt things", step, s.Corrupt)
		}
		c.Close()
		if err := Clear(dir); err != nil {
			t.Fatalf("step %d: second Clear: %v", step, err)
		}
		if finished {
			if step < 10 {
				t.Fatalf("Clear finished after %d steps: the hook is not reached", step)
			}
			return
		}
	}
}
