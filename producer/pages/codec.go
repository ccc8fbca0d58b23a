package pages

import (
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
)

var registerOnce sync.Once

// RegisterCodecs registers with arrow-go the codecs it lacks and this package provides:
// Parquet's LZ4 (LZ4HadoopCodec). The page decoder calls it itself; code that has
// arrow-go read or write Parquet (package dataset's Reader for nested columns, package
// gen, tests writing LZ4 files) calls it first. Calling it again does nothing, so a test
// may register another codec for a while and put this one back by hand.
func RegisterCodecs() {
	registerOnce.Do(func() {
		compress.RegisterCodec(compress.Codecs.Lz4, LZ4HadoopCodec{})
	})
}

// codecOf is the codec of chunk c's pages.
func codecOf(c Chunk) (compress.Codec, error) {
	RegisterCodecs()
	codec, err := compress.GetCodec(c.Codec)
	if err != nil {
		return nil, unsupported("codec %s: %v", c.Codec, err)
	}
	return codec, nil
}
