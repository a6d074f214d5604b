package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/sluicehq/sluice/internal/yamlfmt"
)

const fmtUsage = "usage: sluice fmt [--check] [--diff] FILE|DIR... (- for standard input)"

// fmtCmd formats pipeline files in place (docs/fmt.md). --check changes nothing, lists the
// files that are not formatted and exits 1 if there are any; --diff prints what would change.
// A file that cannot be formatted is reported and makes the exit code 3; the others are still
// formatted.
func fmtCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fmt", flag.ContinueOnError)
	check := fs.Bool("check", false, "change nothing: list the files that are not formatted and exit 1 if there are any")
	diff := fs.Bool("diff", false, "change nothing: print a unified diff of what formatting would change")
	pos, ok := parse(fs, args, stderr)
	if !ok {
		return exitUsage
	}
	if len(pos) == 0 {
		fmt.Fprintln(stderr, fmtUsage)
		return exitUsage
	}
	code := exitOK
	for _, arg := range pos {
		if arg == "-" {
			code = max(code, fmtStream(*check, *diff, stdout, stderr))
			continue
		}
		files, err := yamlfmt.Files([]string{arg})
		if err != nil {
			report(stderr, err)
			code = exitRuntime
			continue
		}
		for _, path := range files {
			code = max(code, fmtFile(path, *check, *diff, stdout, stderr))
		}
	}
	return code
}

// fmtFile formats one file and returns its exit code.
func fmtFile(path string, check, diff bool, stdout, stderr io.Writer) int {
	src, err := os.ReadFile(path)
	if err != nil {
		report(stderr, fmt.Errorf("cannot read %s: %w", path, err))
		return exitRuntime
	}
	out, code := fmtSource(path, src, stderr)
	if out == nil || bytes.Equal(out, src) {
		return code
	}
	if diff {
		fmt.Fprint(stdout, yamlfmt.Diff(path+".orig", path, src, out))
	}
	switch {
	case check:
		if !diff {
			fmt.Fprintln(stdout, path)
		}
		return exitInvalid
	case diff:
		return exitOK
	}
	if err := yamlfmt.WriteFile(path, out); err != nil {
		report(stderr, err)
		return exitRuntime
	}
	return exitOK
}

// fmtStream formats standard input to standard output (for editors).
func fmtStream(check, diff bool, stdout, stderr io.Writer) int {
	src, err := readPipeline("-")
	if err != nil {
		report(stderr, err)
		return exitRuntime
	}
	out, code := fmtSource(stdinName, src, stderr)
	if out == nil {
		out = src // a Jinja template or an error: pass the input through unchanged
	}
	switch {
	case diff:
		fmt.Fprint(stdout, yamlfmt.Diff(stdinName+".orig", stdinName, src, out))
	case !check:
		stdout.Write(out)
	}
	if check && code == exitOK && !bytes.Equal(out, src) {
		if !diff {
			fmt.Fprintln(stdout, stdinName)
		}
		return exitInvalid
	}
	return code
}

// fmtSource formats src, reporting why it cannot be; out is nil then.
func fmtSource(name string, src []byte, stderr io.Writer) ([]byte, int) {
	out, err := yamlfmt.Format(name, src)
	switch {
	case errors.Is(err, yamlfmt.ErrJinja):
		fmt.Fprintf(stderr, "%s: not formatted: Jinja template (fmt leaves templates as they are)\n", name)
		return nil, exitOK
	case err != nil:
		report(stderr, err)
		return nil, exitRuntime
	}
	return out, exitOK
}
