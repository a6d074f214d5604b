package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// completionScript runs `sluice completion SHELL` in process and writes the script to a file.
func completionScript(t *testing.T, shell string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := Main([]string{"completion", shell}, &out, &errOut); code != exitOK || errOut.Len() > 0 || out.Len() == 0 {
		t.Fatalf("sluice completion %s: exit %d, stderr %q, %d bytes of script", shell, code, errOut.String(), out.Len())
	}
	path := filepath.Join(t.TempDir(), "sluice."+shell)
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Bash, as a user's shell would: the script sourced, the completion function driven with
// COMP_WORDS and COMP_CWORD as bash sets them for a Tab after the words typed.
func TestCompletionBash(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	script := completionScript(t, "bash")
	if out, err := exec.Command("bash", "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
	complete := func(words ...string) []string {
		t.Helper()
		// bash -c CODE $0 $1...: $0 is the script, "$@" the words typed.
		args := append([]string{"--norc", "--noprofile", "-c",
			`source "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _sluice; printf '%s\n' "${COMPREPLY[@]}"`,
			script, "sluice"}, words...)
		cmd := exec.Command("bash", args...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("completing %q: %v\n%s", words, err, out)
		}
		return strings.Fields(string(out))
	}
	for _, c := range []struct {
		words []string
		want  []string
	}{
		{[]string{"ru"}, []string{"run"}},
		{[]string{"run", "--for"}, []string{"--for"}},
		{[]string{"run", "--sto"}, []string{"--stop-at-end"}},
		{[]string{"run", "--for", ""}, nil}, // a flag's value: files, as bash's default
		{[]string{"dev", "k"}, []string{"kafka"}},
		{[]string{"dev", "kafka", "--l"}, []string{"--listen"}},
		{[]string{"templates", "describe", "Kafka_To_I"}, []string{"Kafka_To_Iceberg"}},
		{[]string{"completion", "z"}, []string{"zsh"}},
		{[]string{"schema", "WriteToB"}, []string{"WriteToBigQuery"}},
		{[]string{"help", "sta"}, []string{"status"}},
		{[]string{"--v"}, []string{"--version"}},
	} {
		if got := complete(c.words...); !slices.Equal(got, c.want) {
			t.Errorf("sluice %s<Tab>: %q, want %q", strings.Join(c.words, " "), got, c.want)
		}
	}
	// Every command completes, and every flag its --help lists.
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
		if c.name == "dev" {
			continue // its flags are per service: dev kafka above
		}
		var help bytes.Buffer
		Main([]string{c.name, "--help"}, &help, &help)
		var want []string
		for _, m := range regexp.MustCompile(`(?m)^  -([a-z][a-z0-9_-]*)`).FindAllStringSubmatch(help.String(), -1) {
			want = append(want, compFlag{name: m[1]}.spelling())
		}
		if got := complete(c.name, "-"); !slices.Equal(got, want) {
			t.Errorf("sluice %s -<Tab>: %q, want the flags --help lists: %q", c.name, got, want)
		}
	}
	if got := complete(""); !slices.Equal(got, append(names, "help")) {
		t.Errorf("sluice <Tab>: %q, want the commands %q and help", got, names)
	}
}

// zsh and fish parse their scripts (-n) where they are installed (.ci/run installs them), and
// fish, which completes a command line without a terminal (complete -C), completes with it.
func TestCompletionZshFish(t *testing.T) {
	for _, shell := range []string{"zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			if _, err := exec.LookPath(shell); err != nil {
				t.Skipf("%s is not installed", shell)
			}
			script := completionScript(t, shell)
			if out, err := exec.Command(shell, "-n", script).CombinedOutput(); err != nil {
				t.Fatalf("%s -n: %v\n%s", shell, err, out)
			}
			if shell != "fish" {
				return
			}
			for line, want := range map[string]string{
				"sluice ru": "run\trun a pipeline", "sluice dev kafka --l": "--listen", "sluice completion z": "zsh",
				"sluice templates describe Kafka_To_I": "Kafka_To_Iceberg", "sluice run --stop": "--stop-at-end",
			} {
				out, err := exec.Command("fish", "--no-config", "-c", `source $argv[1]; complete -C $argv[2]`, script, line).CombinedOutput()
				var got []string
				for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
					got = append(got, strings.SplitN(l, "\t", 2)[0])
				}
				if err != nil || !slices.Equal(got, []string{strings.SplitN(want, "\t", 2)[0]}) || !strings.HasPrefix(string(out), want) {
					t.Errorf("fish: %s<Tab>: %q (%v), want %q", line, out, err, want)
				}
			}
		})
	}
}

func TestCompletionUsage(t *testing.T) {
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}, {"completion", "bash", "zsh"}} {
		var out, errOut bytes.Buffer
		if code := Main(args, &out, &errOut); code != exitUsage || out.Len() > 0 || !strings.Contains(errOut.String(), "bash") {
			t.Errorf("sluice %s: exit %d, stdout %q, stderr %q; want exit 2 and the shells named", strings.Join(args, " "), code, out.String(), errOut.String())
		}
	}
}
