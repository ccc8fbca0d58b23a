package serve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/producer/dataset"
	"github.com/shmloader/shmloader/producer/storage"
)

// openDataset opens cfg's dataset, through st (nil: the store of its path). A relative path is resolved against the current
// directory (the dataset error names the absolute path it tried), also when it was
// written in a config file in another directory: then the error names the config line
// and says so, and names the path beside the config file if that one exists.
func openDataset(ctx context.Context, cfg *config.Config, st storage.Store) (*dataset.Dataset, error) {
	var ds *dataset.Dataset
	var err error
	if st == nil {
		ds, err = dataset.Open(cfg.Dataset)
	} else {
		ds, err = dataset.OpenStore(ctx, st, cfg.Dataset)
	}
	if err == nil {
		return ds, nil
	}
	line := cfg.Lines["dataset"] // 0 when a flag set it
	notFound := errors.Is(err, dataset.ErrNoFiles) || errors.Is(err, fs.ErrNotExist)
	if line == 0 || cfg.Source == "" || filepath.IsAbs(cfg.Dataset) || !notFound {
		return nil, err
	}
	cfgDir, derr := filepath.Abs(filepath.Dir(cfg.Source))
	wd, werr := os.Getwd()
	if derr == nil && werr == nil && cfgDir != wd {
		note := "a relative dataset in a config is relative to the current directory, not to the config file's directory " + cfgDir
		if beside := filepath.Join(cfgDir, cfg.Dataset); exists(beside) {
			note += fmt.Sprintf(", where %s exists (write that path, or run serve in %s)", beside, cfgDir)
		}
		err = fmt.Errorf("%w; %s", err, note)
	}
	return nil, &config.Error{File: cfg.Source, Line: line, Path: "dataset", Err: err}
}

// exists: path names a file or folder, or, as a glob, matches something (a listing that
// finds no Parquet files there still found the path).
func exists(path string) bool {
	st, err := storage.For(path)
	if err != nil {
		return false
	}
	_, err = st.List(context.Background(), path)
	return err == nil || errors.Is(err, storage.ErrNoObjects)
}
