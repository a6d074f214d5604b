package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// noMatchError is the error of a path that names no file to read: a pattern that matches
// nothing or a directory without files. Every reader is bounded, so an input that is not there
// yet is an error rather than zero records (docs/files.md, "Which files").
type noMatchError struct{ msg string }

func (e *noMatchError) Error() string { return e.msg }

// isNoMatch reports whether err is a noMatchError.
func isNoMatch(err error) bool {
	var nm *noMatchError
	return errors.As(err, &nm)
}

// listFiles returns the files path names, in the order they are read:
//
//   - path itself when it is a file;
//   - for a directory that a sluice writer wrote (it holds epoch-<N> directories): the files
//     of its committed epochs, epoch by epoch, each epoch's files sorted by name;
//   - for another directory: its regular files, sorted, without names starting with "." or
//     "_";
//   - for a glob pattern: what each match gives as above (a match that is a writer's output
//     directory gives its committed files; another directory gives nothing), sorted, leaving
//     out names starting with "." or "_" where the pattern has a wildcard, so that X/*/*
//     does not read an epoch still being written (X/.epoch-N.tmp/...) or a checkpoint.
//
// Paths are cleaned and stay relative when path is. A plain path that does not exist is an
// error wrapping fs.ErrNotExist; a pattern that matches no file, or a directory without
// files, is a noMatchError. A writer's output directory whose committed epochs
// hold no rows gives no files and no error: it is an empty output, not a missing one.
func listFiles(path string) ([]string, error) {
	if path == "" {
		return nil, errors.New("path is empty")
	}
	info, err := os.Stat(path)
	switch {
	case err == nil && info.IsDir():
		files, output, err := dirFiles(path)
		if err == nil && len(files) == 0 && !output {
			err = &noMatchError{fmt.Sprintf("directory %s has no files", path)}
		}
		return files, err
	case err == nil:
		if !info.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is not a regular file", path)
		}
		return []string{filepath.Clean(path)}, nil
	case errors.Is(err, fs.ErrNotExist) && strings.ContainsAny(path, "*?["):
		return globFiles(path)
	}
	return nil, fmt.Errorf("read %s: %w", path, err)
}

// globFiles returns the files a pattern gives (see listFiles).
func globFiles(pattern string) ([]string, error) {
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("pattern %s: %w", pattern, err)
	}
	var out []string
	output := false
	for _, m := range matches {
		if wildcardHidden(pattern, m) {
			continue
		}
		info, err := os.Stat(m)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // a dangling symlink, or removed meanwhile
		case err != nil:
			return nil, fmt.Errorf("read %s: %w", m, err)
		case info.Mode().IsRegular():
			out = append(out, filepath.Clean(m))
		case info.IsDir():
			if isOutputDir(m) {
				files, _, err := dirFiles(m)
				if err != nil {
					return nil, err
				}
				out, output = append(out, files...), true
			}
		}
	}
	if len(out) == 0 && !output {
		return nil, &noMatchError{fmt.Sprintf("no file matches %s", pattern)}
	}
	sort.Strings(out) // epoch and file names are zero-padded or per epoch: sorting keeps their order
	return out, nil
}

// wildcardHidden reports whether a match of pattern has a name starting with "." or "_" in
// a path element that a wildcard of the pattern matched.
func wildcardHidden(pattern, match string) bool {
	pe := strings.Split(filepath.Clean(pattern), string(filepath.Separator))
	me := strings.Split(filepath.Clean(match), string(filepath.Separator))
	if len(pe) != len(me) {
		return false
	}
	for i, p := range pe {
		if strings.ContainsAny(p, "*?[") && (strings.HasPrefix(me[i], ".") || strings.HasPrefix(me[i], "_")) {
			return true
		}
	}
	return false
}

// dirFiles returns the files of a directory (see listFiles) and whether it is a writer's
// output directory.
func dirFiles(dir string) ([]string, bool, error) {
	if isOutputDir(dir) {
		files, err := committedFiles(dir)
		return files, true, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, false, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []string
	for _, e := range entries {
		name := filepath.Join(dir, e.Name())
		if ok, err := readable(name, e.Name()); err != nil {
			return nil, false, err
		} else if ok {
			out = append(out, name)
		}
	}
	return out, false, nil
}

// isOutputDir reports whether dir holds a committed epoch of a sluice writer.
func isOutputDir(dir string) bool {
	epochs, err := committedEpochs(dir)
	return err == nil && len(epochs) > 0
}

// committedFiles returns the data files of the committed epochs of an output directory, in
// epoch order and, within an epoch, sorted by name.
func committedFiles(dir string) ([]string, error) {
	epochs, err := committedEpochs(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range epochs {
		edir := filepath.Join(dir, epochName(e))
		files, _, err := dirFiles(edir)
		if err != nil {
			return nil, err
		}
		out = append(out, files...)
	}
	return out, nil
}

// readable reports whether name (base name base) is a regular file the readers take: not
// hidden, not starting with "_" (metadata such as a sink's _checkpoint.json), symlinks
// followed.
func readable(name, base string) (bool, error) {
	if strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") {
		return false, nil
	}
	info, err := os.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil // a dangling symlink, or removed meanwhile
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", name, err)
	}
	return info.Mode().IsRegular(), nil
}
