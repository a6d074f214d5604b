package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A help asked for is output: on stdout, exit 0, for every command and in each spelling.
func TestHelpOnStdout(t *testing.T) {
	for _, c := range commands() {
		for _, args := range [][]string{{c.name, "--help"}, {c.name, "-h"}, {"help", c.name}} {
			code, out, errOut := sluice(t, args...)
			if code != exitOK || errOut != "" || !strings.HasPrefix(out, "usage: sluice "+c.name) {
				t.Errorf("sluice %s: exit %d, stdout %.80q, stderr %.200q; want the usage on stdout and exit 0", strings.Join(args, " "), code, out, errOut)
			}
			if c.flags && !strings.Contains(out, "flags of sluice "+c.name) {
				t.Errorf("sluice %s: the command's flags are not listed:\n%s", strings.Join(args, " "), out)
			}
		}
	}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		if code, out, errOut := sluice(t, args...); code != exitOK || errOut != "" || !strings.Contains(out, "Usage:") {
			t.Errorf("sluice %s: exit %d, stderr %.200q; want the usage on stdout and exit 0", args[0], code, errOut)
		}
	}
	// Asked for nothing, the usage is an error: stderr and exit 2.
	if code, out, errOut := sluice(t); code != exitUsage || out != "" || !strings.Contains(errOut, "Usage:") {
		t.Errorf("sluice: exit %d, stdout %.80q; want the usage on stderr and exit 2", code, out)
	}
}

// The README's command list and --help agree: every command is in both, and every flag the
// README gives a command is one the command takes, and the other way round.
func TestREADMECommandsMatchHelp(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "## Commands\n\n```\n")
	if !ok {
		t.Fatal("README.md has no ## Commands block")
	}
	block, _, _ = strings.Cut(block, "```")
	// A command's lines: "sluice NAME ..." and the continuation lines under it.
	readmeFlags := map[string][]string{}
	var current string
	flagRE := regexp.MustCompile(`--([a-z][a-z0-9_-]*)`)
	for _, line := range strings.Split(block, "\n") {
		if rest, ok := strings.CutPrefix(line, "sluice "); ok {
			current, _, _ = strings.Cut(rest, " ")
			readmeFlags[current] = []string{}
		}
		if current == "" {
			continue
		}
		text, _, _ := strings.Cut(line, " # ")
		for _, m := range flagRE.FindAllStringSubmatch(text, -1) {
			readmeFlags[current] = append(readmeFlags[current], m[1])
		}
	}
	helpFlagRE := regexp.MustCompile(`(?m)^  -([a-z][a-z0-9_-]*)`)
	for _, c := range commands() {
		inREADME, ok := readmeFlags[c.name]
		if !ok {
			t.Errorf("README.md's command list lacks sluice %s", c.name)
			continue
		}
		if c.name == "dev" { // its flags are per service (dev kafka, dev bigquery)
			continue
		}
		_, help, _ := sluice(t, c.name, "--help")
		var taken []string
		for _, m := range helpFlagRE.FindAllStringSubmatch(help, -1) {
			taken = append(taken, m[1])
		}
		for _, f := range inREADME {
			if !slices.Contains(taken, f) {
				t.Errorf("README.md gives sluice %s the flag --%s, which it does not take", c.name, f)
			}
		}
		for _, f := range taken {
			if !slices.Contains(inREADME, f) && !templateFlag(f) {
				t.Errorf("sluice %s takes --%s, which README.md's command list does not show", c.name, f)
			}
		}
	}
	for name := range readmeFlags {
		if !slices.ContainsFunc(commands(), func(c command) bool { return c.name == name }) {
			t.Errorf("README.md lists sluice %s, which is no command", name)
		}
	}
}

// templateFlag reports the template parameter flags every loading command takes, and gcloud's
// pipeline flags; the README describes them once, under the command list.
func templateFlag(name string) bool {
	return slices.Contains([]string{"p", "parameters", "params-file", "jinja_variables", "jinja-variables", "name",
		"yaml-pipeline-file", "yaml-pipeline", "template-file-gcs-location"}, name)
}
