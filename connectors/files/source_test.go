package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

func textSource(t *testing.T, path string) component.Source {
	t.Helper()
	c, _ := mustBuild(t, fmt.Sprintf("type: ReadFromText\nconfig:\n  path: %q\n", path))
	return c.(component.Source)
}

func TestReadTextDirectory(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.txt", "one\ntwo\n")
	writeFile(t, dir, "b.txt", "three\n\nfour") // a blank line, no trailing newline
	writeFile(t, dir, "c.txt", "five\r\n\r\nsix\r\n")
	writeFile(t, dir, "d.txt", "")
	writeFile(t, dir, ".hidden", "no\n")
	writeFile(t, dir, "_SUCCESS", "no\n")
	writeFile(t, dir, "sub/e.txt", "no\n")

	out, offsets, err := readAll(t, textSource(t, dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	rows, pos := out.Rows(component.Main), out.Positions(component.Main)
	want := []string{"one", "two", "three", "four", "five", "six"}
	if got := lines(rows); !equalStrings(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	a, b, c := "file:"+filepath.Join(dir, "a.txt"), "file:"+filepath.Join(dir, "b.txt"), "file:"+filepath.Join(dir, "c.txt")
	wantPos := []schemas.Position{{Source: a, Offset: 0}, {Source: a, Offset: 4}, {Source: b, Offset: 0}, {Source: b, Offset: 7},
		{Source: c, Offset: 0}, {Source: c, Offset: 8}}
	for i := range wantPos {
		if pos[i] != wantPos[i] {
			t.Errorf("row %d at %v, want %v", i, pos[i], wantPos[i])
		}
	}
	d := "file:" + filepath.Join(dir, "d.txt")
	wantOffsets := schemas.Offsets{a: {0: 8}, b: {0: 11}, c: {0: 13}, d: {0: 0}}
	if !offsets.Equal(wantOffsets) {
		t.Errorf("offsets %v, want %v", offsets, wantOffsets)
	}
}

// A relative path names its files by their absolute path, so a checkpoint still matches when
// the pipeline runs from another directory or spells the path differently.
func TestRelativePathGivesAbsolutePositions(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "in/x.txt", "x\n")
	t.Chdir(dir)
	want := "file:" + filepath.Join(dir, "in", "x.txt")
	for _, path := range []string{"./in/", "in", filepath.Join(dir, "in")} {
		out, _, err := readAll(t, textSource(t, path), nil)
		if err != nil {
			t.Fatal(err)
		}
		if pos := out.Positions(component.Main); len(pos) != 1 || pos[0].Source != want {
			t.Errorf("path %q: got positions %v, want %s", path, pos, want)
		}
	}
}

// TestResume reads part of the input, then resumes at the offsets at that point, as after a
// restart from a checkpoint: together the two runs read every line exactly once.
func TestResume(t *testing.T) {
	dir := t.TempDir()
	var big strings.Builder
	for i := range 2500 {
		fmt.Fprintf(&big, "line %d\n", i)
	}
	writeFile(t, dir, "a.txt", big.String())
	writeFile(t, dir, "b.txt", "b1\nb2")
	src := textSource(t, dir)
	ctx := context.Background()
	if err := src.Open(ctx, nil); err != nil {
		t.Fatal(err)
	}
	b, err := src.Read(ctx)
	if err != nil || b.Len() != maxBatchLines {
		t.Fatalf("first batch: %v lines, %v", b.Len(), err)
	}
	at := src.Offsets()
	a := "file:" + filepath.Join(dir, "a.txt")
	if next, _ := at.Get(a, 0); next != int64(len("line 0\n")*10+len("line 10\n")*90+len("line 100\n")*900) {
		t.Errorf("offset after the first batch: %d", next)
	}
	src.Close()

	out, offsets, err := readAll(t, textSource(t, dir), at)
	if err != nil {
		t.Fatal(err)
	}
	// Files are read in turn, a batch from each: order holds within each file.
	var fromA, fromB []string
	for _, l := range lines(out.Rows(component.Main)) {
		if strings.HasPrefix(l, "line ") {
			fromA = append(fromA, l)
		} else {
			fromB = append(fromB, l)
		}
	}
	if len(fromA) != 1500 || fromA[0] != "line 1000" || fromA[1499] != "line 2499" || strings.Join(fromB, ",") != "b1,b2" {
		t.Errorf("resumed read: %d lines of a.txt, starting %q; b.txt: %q", len(fromA), fromA[:3], fromB)
	}
	// Resuming at the end reads nothing.
	out, _, err = readAll(t, textSource(t, dir), offsets)
	if err != nil || len(out[component.Main]) != 0 {
		t.Errorf("resuming at the end: %v, %v", out, err)
	}
}

func TestResumeMidFileFromPositions(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "a.txt", "l0\r\nl1\n\nl2\nl3")
	out, _, err := readAll(t, textSource(t, p), nil)
	if err != nil {
		t.Fatal(err)
	}
	pos := out.Positions(component.Main)
	all := []string{"l0", "l1", "l2", "l3"}
	for k, at := range pos {
		from := schemas.Offsets{}
		from.Set(at.Source, 0, at.Offset)
		out, _, err := readAll(t, textSource(t, p), from)
		if err != nil {
			t.Fatal(err)
		}
		if got := lines(out.Rows(component.Main)); !equalStrings(got, all[k:]) {
			t.Errorf("from offset %d: got %q, want %q", at.Offset, got, all[k:])
		}
	}
}

func TestResumeFromAChangedFile(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "a.txt", "one\ntwo\n")
	for _, tt := range []struct {
		off  int64
		want string
	}{{5, "not the start of a line"}, {100, "has 8 bytes"}} {
		from := schemas.Offsets{}
		from.Set("file:"+p, 0, tt.off)
		_, _, err := readAll(t, textSource(t, p), from)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("offset %d: got %v, want an error naming the file and %q", tt.off, err, tt.want)
		}
	}
}

func TestReadMissingFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nope.txt")
	if _, _, err := readAll(t, textSource(t, p), nil); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("got %v, want an error naming %s", err, p)
	}
	// A pattern that matches nothing is an error too: the input is not there.
	pattern := filepath.Join(filepath.Dir(p), "*.txt")
	if _, _, err := readAll(t, textSource(t, pattern), nil); err == nil || err.Error() != "no file matches "+pattern {
		t.Errorf("empty glob: got %v, want an error naming the pattern", err)
	}
}

func TestLineTooLongNamesFileAndOffset(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "a.txt", "short\n"+strings.Repeat("x", 5000)+"\n")
	src := newSource(p, textSchema, textReadFormat, nil)
	defer func(n int) { maxLineBytes = n }(maxLineBytes)
	maxLineBytes = 1000
	_, _, err := readAll(t, src, nil)
	if !errors.Is(err, errLineTooLong) || !strings.Contains(err.Error(), p+" at offset 6") {
		t.Errorf("got %v", err)
	}
}

func TestReadStopsWhenCancelled(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.txt", "x\n")
	src := textSource(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	if err := src.Open(ctx, nil); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := src.Read(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v", err)
	}
	if err := src.Close(); err != nil {
		t.Error(err)
	}
}

func TestReadBatchesStayWithinOneFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.txt", "a1\na2\n")
	writeFile(t, dir, "b.txt", "b1\n")
	src := textSource(t, dir)
	ctx := context.Background()
	if err := src.Open(ctx, nil); err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var sizes []int
	for {
		b, err := src.Read(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range b.Pos {
			if p.Source != b.Pos[0].Source {
				t.Errorf("a batch mixes %s and %s", p.Source, b.Pos[0].Source)
			}
		}
		sizes = append(sizes, b.Len())
	}
	if fmt.Sprint(sizes) != "[2 1]" {
		t.Errorf("batch sizes %v, want [2 1]", sizes)
	}
}
