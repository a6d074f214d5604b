package iceberg

import (
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// Parquet pages are compressed one at a time (EncodeAll), so a zstd window larger than a page
// finds no more matches; arrow-go's encoders keep the default 8 MiB window and a 16 MiB
// history each, three of them 48 MiB of a kafka-iceberg run's 107 MiB heap (issue 21).
// sluice's encoders keep a window of zstdWindow and the low-memory history (window + 128
// KiB): the same compression for pages up to the window (1 MiB by default, writeView), and a
// valid zstd frame with a shorter reach beyond it.
const zstdWindow = 1 << 20

// zstdCodec is arrow-go's zstd codec with sluice's encoders; decoding is arrow-go's.
type zstdCodec struct {
	fullCodec
	mu    sync.Mutex
	pools map[zstd.EncoderLevel]*sync.Pool
}

// fullCodec is what arrow-go's zstd codec implements.
type fullCodec interface {
	compress.ErrorCodec
	compress.StreamingCodec
}

func init() {
	orig, err := compress.GetCodec(compress.Codecs.Zstd)
	if full, ok := orig.(fullCodec); err == nil && ok {
		compress.RegisterCodec(compress.Codecs.Zstd, &zstdCodec{fullCodec: full, pools: map[zstd.EncoderLevel]*sync.Pool{}})
	}
}

func (c *zstdCodec) Encode(dst, src []byte) []byte {
	return c.EncodeLevel(dst, src, compress.DefaultCompressionLevel)
}

// EncodeLevel compresses src at level (zstd's numbering) with a pooled encoder, as arrow-go
// does.
func (c *zstdCodec) EncodeLevel(dst, src []byte, level int) []byte {
	l := zstd.SpeedDefault
	if level != compress.DefaultCompressionLevel {
		l = zstd.EncoderLevelFromZstd(level)
	}
	pool := c.pool(l)
	enc := pool.Get().(*zstd.Encoder)
	defer pool.Put(enc)
	return enc.EncodeAll(src, dst[:0])
}

func (c *zstdCodec) pool(l zstd.EncoderLevel) *sync.Pool {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pools[l]
	if p == nil {
		p = &sync.Pool{New: func() any {
			// The options are valid constants: NewWriter cannot fail with them.
			enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(l), zstd.WithEncoderConcurrency(1),
				zstd.WithZeroFrames(true), zstd.WithAllLitEntropyCompression(true),
				zstd.WithWindowSize(zstdWindow), zstd.WithLowerEncoderMem(true))
			return enc
		}}
		c.pools[l] = p
	}
	return p
}
