package main

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

func threadCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(1, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestZstdScratch(t *testing.T) {
	runtime.LockOSThread()
	s, rows := benchRows(t, 2000)
	note, _ := s.Index("note")
	var page []byte
	for _, r := range rows {
		x := r[note].(string)
		page = append(page, byte(len(x)), byte(len(x)>>8), 0, 0)
		page = append(page, x...)
		if len(page) > 512<<10 {
			break
		}
	}
	base := []zstd.EOption{zstd.WithEncoderConcurrency(1), zstd.WithZeroFrames(true)}
	cases := []struct {
		name string
		opts []zstd.EOption
	}{
		{"sluice", []zstd.EOption{zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithAllLitEntropyCompression(true), zstd.WithWindowSize(1 << 20), zstd.WithLowerEncoderMem(true)}},
		{"sluice-nolow", []zstd.EOption{zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithAllLitEntropyCompression(true), zstd.WithWindowSize(1 << 20)}},
		{"sluice-nocrc", []zstd.EOption{zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithAllLitEntropyCompression(true), zstd.WithWindowSize(1 << 20), zstd.WithLowerEncoderMem(true), zstd.WithEncoderCRC(false)}},
		{"default-8M", []zstd.EOption{zstd.WithEncoderLevel(zstd.SpeedDefault)}},
		{"fastest", []zstd.EOption{zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithWindowSize(1 << 20), zstd.WithLowerEncoderMem(true)}},
	}
	for round := range 3 {
		for _, c := range cases {
			enc, _ := zstd.NewWriter(nil, append(base, c.opts...)...)
			var out []byte
			out = enc.EncodeAll(page, out[:0])
			start := threadCPU()
			const n = 100
			for range n {
				out = enc.EncodeAll(page, out[:0])
			}
			cpu := threadCPU() - start
			fmt.Printf("round %d %-14s %6.1f MB per CPU-s ratio %.4f\n", round, c.name, float64(len(page)*n)/cpu.Seconds()/1e6, float64(len(out))/float64(len(page)))
		}
	}
}
