// Package colsrc is the column sources that feed the transforms from decoded Parquet
// pages: the step between package pages (which decodes one flat column chunk into runs
// of physical values) and package transform (which turns typed values into tensor
// bytes and knows nothing of Parquet). A row group goes storage → dataset (footers,
// chunks) → pages (decode) → colsrc → transform → serve; colsrc imports the packages
// on either side of it, and none of them imports colsrc.
//
// Sources and its Worker are serve's entry point. Plan says which outputs of a row group
// are read from pages: those whose columns are all flat (max repetition level 0: a
// top-level column, or a field of a struct by its dotted path) or partition columns,
// of types the transforms read from runs. After Worker.Begin, every chunk of the row
// group is read once, right before its first use; Worker.Apply reads such an output's
// chunks not read yet and runs the transforms over them (Decoders.Apply, then transform.Output.ApplyRuns):
// each chunk's page decoder is a transform.Runs (pageRuns) that hands over each run as
// the decoder yields it, viewed, not copied, and a partition column's value is a
// dictionary of one entry that every row uses (constRuns). Kind maps a column's Arrow
// type and its chunk's physical type to the transforms' ValueKind, as arrow-go's
// reader converts them; INT96 timestamps are converted to nanoseconds here, and INT96
// values and stored decimals that arrow-go refuses are errors here, for every row of a
// chunk, selected or not.
//
// Arrays reads columns as Arrow arrays of the dataset's types, for the filter and the
// transforms' array path: a flat column's chunk is decoded by the same page decoder
// into its array (BuildArray: the array pqarrow gives, as package dataset converts it
// to the dataset's type, which tests hold it to for every flat type), a partition
// column is its file's value, and only nested columns (lists, whole structs) go through
// arrow-go (dataset.Reader.ReadRowGroup). A flat column of a type BuildArray does not
// build is an error that names the file, row group and column, never another road.
//
// In the steady state nothing is allocated per page: a Worker keeps its decoders,
// buffers and the files' leaves from row group to row group.
package colsrc
