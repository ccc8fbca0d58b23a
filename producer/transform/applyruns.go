package transform

import (
	"fmt"
)

// RunState is one goroutine's buffers for ApplyRuns, one set per column, kept from
// call to call so that the steady state allocates nothing.
type RunState struct {
	cols []runSource
	srcs []colSource
}

// ApplyRuns is ApplyTo reading column j of the output from cols[j], a column of rows
// rows, a run at a time: no Arrow array is built. Every column's kind must be one
// ReadsValues accepts. Every run of every column is read, to its last row, whatever
// sel selects, so that a source checks all its values.
func (o *Output) ApplyRuns(st *RunState, cols []Column, rows int, sel []int32, dst Dest) error {
	if len(cols) != len(o.cols) {
		return fmt.Errorf("output %q: %d columns given, want %d", o.name, len(cols), len(o.cols))
	}
	n, err := o.checkDest(rows, sel, dst)
	if err != nil {
		return err
	}
	if len(st.cols) < len(cols) {
		st.cols = make([]runSource, len(cols))
	}
	st.srcs = st.srcs[:0]
	for j, c := range cols {
		p := &st.cols[j]
		if err := p.open(&o.cols[j], c, rows); err != nil {
			return fmt.Errorf("output %q, column %q: %w", o.name, o.cols[j].src.name, err)
		}
		st.srcs = append(st.srcs, p)
	}
	if err := o.run(st.srcs, n, sel, dst); err != nil {
		return err
	}
	for j := range cols {
		if p := &st.cols[j]; p.rows > 0 {
			if err := p.fetch(p.rows - 1); err != nil {
				return fmt.Errorf("output %q, column %q: %w", o.name, o.cols[j].src.name, err)
			}
		}
	}
	return nil
}
