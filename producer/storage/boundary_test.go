package storage

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// fileAccess is the calls that touch a file system's files or folders by name.
var fileAccess = map[string]bool{
	"os.Open": true, "os.OpenFile": true, "os.Stat": true, "os.Lstat": true, "os.ReadDir": true,
	"os.ReadFile": true, "filepath.Walk": true, "filepath.WalkDir": true, "filepath.Glob": true,
	"fs.WalkDir": true, "fs.ReadDir": true, "fs.Glob": true, "ioutil.ReadDir": true, "ioutil.ReadFile": true,
}

// allowed is the producer's file access outside this package, none of it to a
// dataset's files, each with why.
var allowed = map[string]string{
	"config/parse.go os.ReadFile":              "the config file",
	"serve/workerstate.go os.ReadFile":         "/proc/self/task/N/stat of a worker thread",
	"serve/cachesetup.go os.Stat":              "the cache directory",
	"gen/write.go os.ReadDir":                  "the directory `shmloader gen` writes a dataset into",
	"dataset/pqdamage/pqdamage.go os.ReadFile": "a test kit that damages files",
}

// Every access to a dataset's files goes through a Store: no package of the producer
// but this one opens, stats, reads or lists files by name, except what allowed names.
func TestNoFileAccessOutsideStorage(t *testing.T) {
	root := ".." // producer/
	found := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "storage" || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		names := map[string]string{} // local import name -> package path
		for _, im := range f.Imports {
			p := strings.Trim(im.Path.Value, `"`)
			n := p[strings.LastIndex(p, "/")+1:]
			if im.Name != nil {
				n = im.Name.Name
			}
			names[n] = p
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			pkg := names[id.Name]
			call := pkg[strings.LastIndex(pkg, "/")+1:] + "." + sel.Sel.Name
			if pkg == "io/ioutil" {
				call = "ioutil." + sel.Sel.Name
			}
			if !fileAccess[call] || (pkg != "os" && pkg != "path/filepath" && pkg != "io/fs" && pkg != "io/ioutil") {
				return true
			}
			key := filepath.ToSlash(rel) + " " + call
			found[key] = true
			if _, ok := allowed[key]; !ok {
				t.Errorf("%s calls %s: dataset files are read through a storage.Store only (or add it to allowed, saying why it is no dataset file)", rel, call)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for key := range allowed {
		if !found[key] {
			t.Errorf("allowed names %q, which no longer happens: remove it", key)
		}
	}
}
