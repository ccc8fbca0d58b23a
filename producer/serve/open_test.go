package serve

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shmloader/shmloader/producer/config"
)

// TestOpenDatasetRelativeToCwd: a relative dataset of a config file is looked for in the
// current directory, and the error says so: the config line, the absolute path tried,
// and, for a config in another directory, that it is not that directory's (naming the
// path there when it exists).
func TestOpenDatasetRelativeToCwd(t *testing.T) {
	wd, cfgDir := t.TempDir(), t.TempDir()
	t.Chdir(wd)
	load := func(dir string) *config.Config {
		path := filepath.Join(dir, "train.yaml")
		if err := os.WriteFile(path, []byte("job: j\ndataset: data/x\noutputs: {id: id}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := config.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	check := func(c *config.Config, want, notWant []string) {
		t.Helper()
		_, err := openDataset(context.Background(), c, nil)
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Line != 2 || ce.Path != "dataset" {
			t.Fatalf("want a config error at line 2, key dataset; got %v", err)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error lacks %q: %v", w, err)
			}
		}
		for _, w := range notWant {
			if strings.Contains(err.Error(), w) {
				t.Errorf("error says %q: %v", w, err)
			}
		}
	}
	tried := "(relative to the current directory " + wd + ": " + filepath.Join(wd, "data/x") + ")"
	other := "not to the config file's directory " + cfgDir
	check(load(cfgDir), []string{tried, other}, []string{"exists"})
	if err := os.MkdirAll(filepath.Join(cfgDir, "data", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	check(load(cfgDir), []string{tried, other, "where " + filepath.Join(cfgDir, "data/x") + " exists"}, nil)
	check(load(wd), []string{tried}, []string{"config file's directory"})
}
