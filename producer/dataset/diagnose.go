package dataset

import (
	"errors"

	"github.com/shmloader/shmloader/producer/pages"
)

// diagnose is called when arrow-go failed to decode leaves of row group rg: it walks
// their pages with package pages and returns what is wrong with which page, or nil when
// it finds nothing (arrow-go's own message then stands).
func (r *Reader) diagnose(rg int, leaves map[int]bool) error {
	schema := r.ft.meta.Schema
	for i := range schema.NumColumns() {
		if !leaves[i] {
			continue
		}
		c := schema.Column(i)
		l := Leaf{Index: i, Type: c.PhysicalType(), TypeLen: c.TypeLength(), MaxDef: c.MaxDefinitionLevel(), MaxRep: c.MaxRepetitionLevel()}
		chunks, _, err := r.ReadChunks(rg, []Leaf{l}, nil)
		if err != nil {
			return err
		}
		if err := pages.Check(chunks[0]); err != nil && !errors.Is(err, pages.ErrUnsupported) {
			return leafError{path: c.Path(), err: err}
		}
	}
	return nil
}

// leafError names the leaf of a nested column a page error is in.
type leafError struct {
	path string
	err  error
}

func (e leafError) Error() string { return "leaf " + e.path + ": " + e.err.Error() }
func (e leafError) Unwrap() error { return e.err }
