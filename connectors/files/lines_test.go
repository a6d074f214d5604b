package files

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type readLine struct {
	text  string
	start int64
}

// readLines reads every line of content from offset off with a small buffer, so that long
// lines go through the accumulator.
func readLines(content string, off int64, bufSize, maxLine int) ([]readLine, int64, error) {
	lr := newLineReader(strings.NewReader(content[off:]), off, bufSize, maxLine)
	var out []readLine
	for {
		line, start, err := lr.next()
		if err == io.EOF {
			return out, lr.off, nil
		}
		if err != nil {
			return out, lr.off, err
		}
		out = append(out, readLine{string(line), start})
	}
}

func TestLineReader(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    []readLine
	}{
		{"empty", "", nil},
		{"trailing newline", "a\nbc\n", []readLine{{"a", 0}, {"bc", 2}}},
		{"no trailing newline", "a\nbc", []readLine{{"a", 0}, {"bc", 2}}},
		{"crlf", "a\r\nbc\r\n", []readLine{{"a", 0}, {"bc", 3}}},
		{"cr inside a line stays", "a\rb\n\r", []readLine{{"a\rb", 0}, {"\r", 4}}},
		{"blank lines", "\n\nx\n", []readLine{{"", 0}, {"", 1}, {"x", 2}}},
		{"longer than the buffer", strings.Repeat("x", 40) + "\ny", []readLine{{strings.Repeat("x", 40), 0}, {"y", 41}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, end, err := readLines(tt.content, 0, 16, 1<<10)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("line %d: got %v, want %v", i, got[i], tt.want[i])
				}
			}
			if end != int64(len(tt.content)) {
				t.Errorf("ends at offset %d, want %d", end, len(tt.content))
			}
		})
	}
}

func TestLineReaderTooLong(t *testing.T) {
	for _, bufSize := range []int{16, 1 << 10} { // through the accumulator and not
		_, _, err := readLines("ok\n"+strings.Repeat("x", 100)+"\n", 0, bufSize, 50)
		if !errors.Is(err, errLineTooLong) {
			t.Errorf("buffer %d: got %v, want a line-too-long error", bufSize, err)
		}
		// exactly at the limit, with a CRLF terminator, is fine
		got, _, err := readLines(strings.Repeat("x", 50)+"\r\n", 0, bufSize, 50)
		if err != nil || len(got) != 1 {
			t.Errorf("buffer %d: a line at the limit: %v, %v", bufSize, err, got)
		}
	}
}

// FuzzLineReader checks that the lines and offsets the reader returns describe the input
// exactly, and that resuming at any returned offset reads the remaining lines.
func FuzzLineReader(f *testing.F) {
	for _, s := range []string{"", "a", "a\n", "a\r\n\r\nb", "\n\n\n", "x\ry\r\n", strings.Repeat("long", 20) + "\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		got, end, err := readLines(content, 0, 16, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if end != int64(len(content)) {
			t.Fatalf("ends at %d of %d", end, len(content))
		}
		next := int64(0)
		for i, l := range got {
			if l.start != next {
				t.Fatalf("line %d starts at %d, want %d", i, l.start, next)
			}
			rest := content[l.start:]
			if !strings.HasPrefix(rest, l.text) {
				t.Fatalf("line %d %q is not the input at %d", i, l.text, l.start)
			}
			term := rest[len(l.text):]
			switch {
			case strings.HasPrefix(term, "\r\n"):
				next = l.start + int64(len(l.text)) + 2
			case strings.HasPrefix(term, "\n"):
				next = l.start + int64(len(l.text)) + 1
			case term == "":
				next = l.start + int64(len(l.text))
			default:
				t.Fatalf("line %d %q is followed by %q", i, l.text, term)
			}
			if strings.Contains(l.text, "\n") || strings.HasSuffix(l.text, "\r") && strings.HasPrefix(term, "\n") {
				t.Fatalf("line %d %q holds a terminator", i, l.text)
			}
		}
		if next != int64(len(content)) {
			t.Fatalf("lines cover %d of %d bytes", next, len(content))
		}
		if len(got) > 0 {
			k := len(got) / 2
			resumed, _, err := readLines(content, got[k].start, 16, 1<<20)
			if err != nil || len(resumed) != len(got)-k || (len(resumed) > 0 && resumed[0] != got[k]) {
				t.Fatalf("resuming at %d: %v, %v; want %v", got[k].start, resumed, err, got[k:])
			}
		}
	})
}

func TestListFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b.txt", "a.txt", ".hidden", "_SUCCESS", "c.json", "sub/d.txt"} {
		writeFile(t, dir, name, "x\n")
	}
	if err := os.Symlink(filepath.Join(dir, "a.txt"), filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "missing"), filepath.Join(dir, "dangling.txt")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want []string
	}{
		{dir, []string{"a.txt", "b.txt", "c.json", "link.txt"}},
		{dir + "/./", []string{"a.txt", "b.txt", "c.json", "link.txt"}},
		{filepath.Join(dir, "*.txt"), []string{"a.txt", "b.txt", "link.txt"}},
		{filepath.Join(dir, "*", "*.txt"), []string{"sub/d.txt"}},
		{filepath.Join(dir, "_SUCCESS"), []string{"_SUCCESS"}}, // named explicitly
	}
	for _, tt := range tests {
		got, err := listFiles(tt.path)
		if err != nil {
			t.Errorf("%s: %v", tt.path, err)
			continue
		}
		var want []string
		for _, w := range tt.want {
			want = append(want, filepath.Join(dir, w))
		}
		if !equalStrings(got, want) {
			t.Errorf("%s: got %q, want %q", tt.path, got, want)
		}
	}
	if _, err := listFiles(filepath.Join(dir, "*.parquet")); !isNoMatch(err) || !strings.Contains(err.Error(), "no file matches "+dir) {
		t.Errorf("a pattern that matches nothing: got %v, want an error naming it", err)
	}
	if _, err := listFiles(filepath.Join(dir, "sub", "*", "x")); !isNoMatch(err) {
		t.Errorf("a pattern below a file: got %v", err)
	}
	if _, err := listFiles(filepath.Join(dir, "sub")); err != nil {
		t.Errorf("a directory: %v", err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := listFiles(empty); !isNoMatch(err) || !strings.Contains(err.Error(), "directory "+empty+" has no files") {
		t.Errorf("an empty directory: got %v", err)
	}
	if _, err := listFiles(filepath.Join(dir, "nope.txt")); !notExist(err) || !strings.Contains(err.Error(), "nope.txt") {
		t.Errorf("a missing file: got %v, want an error naming it", err)
	}
	// relative paths stay relative
	t.Chdir(dir)
	got, err := listFiles("./sub/")
	if err != nil || !equalStrings(got, []string{"sub/d.txt"}) {
		t.Errorf("relative: got %q, %v", got, err)
	}
}

func TestSplitLines(t *testing.T) {
	got := strs(splitLines([]byte("a\n\nb\nc")))
	if want := []string{"a", "", "b", "c"}; !equalStrings(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := splitLines(bytes.Repeat([]byte("x\n"), 0)); got != nil {
		t.Errorf("empty input: got %q", got)
	}
}
