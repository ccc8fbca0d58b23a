package cache

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shmloader/shmloader/internal/testkit"
)

// mountTmpfs mounts a tmpfs of the given options at a new dir; ok=false where mounting is
// not permitted (the callers then check the property another way).
func mountTmpfs(t *testing.T, flags uintptr, opts string) (string, bool) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	err := unix.Mount("tmpfs", dir, "tmpfs", flags, opts)
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		t.Logf("mount tmpfs: %v; checking without it", err)
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	return dir, true
}

// A full disk fails Create with ErrNoSpace (fallocate reserves every byte first), leaves
// no temp file and no reservation, and the next Create after space frees up works.
func TestFullDiskIsErrNoSpaceAtCreate(t *testing.T) {
	if dir, ok := mountTmpfs(t, 0, "size=2m"); ok {
		c, lb := openCache(t, dir, 1<<20, 1)
		if !lb.has("take RAM") {
			t.Errorf("no tmpfs warning: %q", lb)
		}
		_, free, err := statDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		ballast := filepath.Join(dir, "ballast")
		if err := os.WriteFile(ballast, make([]byte, free-256<<10), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = c.Create(key(1), Meta{}, []int64{600 << 10})
		if !errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), dir) {
			t.Fatalf("Create on a full tmpfs: %v, want ErrNoSpace naming the file", err)
		}
		if s := c.Stats(); s.WriteErrors != 1 || len(temps(t, dir)) != 0 || pendingBytes(t, c, 0) != 0 {
			t.Fatalf("after ErrNoSpace: stats %+v, temps %v", s, temps(t, dir))
		}
		os.Remove(ballast)
		put(t, c, key(1), 600<<10)
		mustGet(t, c, key(1), 600<<10)
	}
	// Always, as well: a file size limit makes fallocate fail with EFBIG, in a child.
	p := testkit.Spawn(t, "fsize", roleCfg{Dir: t.TempDir(), Size: 64 << 20})
	if l := p.Line(t, "nospace", 20*time.Second); !strings.HasPrefix(l, "nospace true 1 ") {
		t.Fatalf("under RLIMIT_FSIZE: %q, want ErrNoSpace and one write error", l)
	}
}

// Less free space than Size: the budget is lowered to what fits, and Open says so.
func TestBudgetIsLoweredToTheFreeSpace(t *testing.T) {
	dir, ok := mountTmpfs(t, 0, "size=2m")
	if !ok {
		dir = t.TempDir()
	}
	_, free, err := statDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	size := free + 1<<40 // more than any disk here
	c, lb := openCache(t, dir, size, 4)
	if c.Budget() > free || c.Budget() < free/2 || !lb.has("using a budget of") {
		t.Fatalf("budget %d with %d free, log %q", c.Budget(), free, lb)
	}
}

func TestOpenOfAnUnwritableDirNamesIt(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain-file")
	os.WriteFile(file, nil, 0o644)
	dir := filepath.Join(file, "cache")
	if _, err := Open(Options{Dir: dir, Size: 1 << 20}); err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Open under a file: %v, want an error naming %s", err, dir)
	}
	if ro, ok := mountTmpfs(t, unix.MS_RDONLY, "size=1m"); ok {
		_, err := Open(Options{Dir: ro, Size: 1 << 20})
		if err == nil || !strings.Contains(err.Error(), ro) || !strings.Contains(err.Error(), "not writable") {
			t.Fatalf("Open of a read-only dir: %v", err)
		}
	}
	if os.Getuid() != 0 { // root writes through a mode of 0555
		ro := t.TempDir()
		os.Chmod(ro, 0o555)
		if _, err := Open(Options{Dir: ro, Size: 1 << 20}); err == nil || !strings.Contains(err.Error(), ro) {
			t.Fatalf("Open of a 0555 dir: %v", err)
		}
	}
	if _, err := Open(Options{Dir: t.TempDir(), Size: 0}); err == nil {
		t.Fatal("Size 0 accepted")
	}
}

func TestFileSystemKinds(t *testing.T) {
	for magic, want := range map[uint32]string{
		unix.TMPFS_MAGIC: "ram", unix.RAMFS_MAGIC: "ram",
		unix.NFS_SUPER_MAGIC: "network", 0xFF534D42: "network", unix.FUSE_SUPER_MAGIC: "network",
		0xEF53 /* ext4 */ : "", 0x58465342 /* xfs */ : "",
	} {
		if got := fsKind(magic); got != want {
			t.Errorf("fsKind(%#x) = %q, want %q", magic, got, want)
		}
	}
}
