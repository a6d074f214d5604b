package main

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/templates"
)

// completionCmd prints a shell completion script. The scripts are generated from the command
// table (commands()) and each command's --help, so a command or flag added there completes
// without a change here.
func completionCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: sluice completion bash|zsh|fish")
		return exitUsage
	}
	entries := completionEntries()
	switch args[0] {
	case "bash":
		writeBashCompletion(stdout, entries)
	case "zsh":
		writeZshCompletion(stdout, entries)
	case "fish":
		writeFishCompletion(stdout, entries)
	default:
		fmt.Fprintf(stderr, "sluice completion: unknown shell %q: bash, zsh or fish\n", args[0])
		return exitUsage
	}
	return exitOK
}

// compEntry is what completes after the words of path (nil: after "sluice"): the words that
// may come next (subcommands, or the names `templates describe` takes) and the flags.
type compEntry struct {
	path  []string
	words []compWord
	flags []compFlag
}

type compWord struct{ name, summary string }

// compFlag is a flag as its command's --help lists it; value says it takes an argument.
type compFlag struct {
	name, usage string
	value       bool
}

// spelling is the flag as completed: -p for a one-letter flag, --name for the others.
func (f compFlag) spelling() string {
	if len(f.name) == 1 {
		return "-" + f.name
	}
	return "--" + f.name
}

// key is the entry's path as the scripts match it: "", "run", "dev kafka".
func (e compEntry) key() string { return strings.Join(e.path, " ") }

func (e compEntry) wordNames() []string {
	names := make([]string, len(e.words))
	for i, w := range e.words {
		names[i] = w.name
	}
	return names
}

// completionEntries builds the completion model: the commands, their subcommands (the
// lower-case words that open a command's usage: "kafka|bigquery", "list | describe NAME"),
// and the flags of each, parsed from what --help prints for it.
func completionEntries() []compEntry {
	top := compEntry{flags: []compFlag{{name: "help", usage: "print the usage"}, {name: "version", usage: "print the version"}}}
	help := compEntry{path: []string{"help"}}
	var entries []compEntry
	for _, c := range commands() {
		top.words = append(top.words, compWord{c.name, c.summary})
		help.words = append(help.words, compWord{c.name, c.summary})
		e := compEntry{path: []string{c.name}, flags: helpFlags(c, nil)}
		if c.name == "schema" { // sluice schema TYPE
			for _, s := range component.All() {
				e.words = append(e.words, compWord{s.Name, firstSentence(s.Summary)})
			}
		}
		var subEntries []compEntry
		for _, sub := range subcommands(c.args) {
			e.words = append(e.words, compWord{name: sub})
			se := compEntry{path: []string{c.name, sub}, flags: helpFlags(c, []string{sub})}
			if c.name == "templates" && sub == "describe" {
				for _, b := range templates.Builtins() {
					se.words = append(se.words, compWord{b.Name, firstSentence(b.Header.Description)})
				}
			}
			if len(se.flags) > 0 || len(se.words) > 0 {
				subEntries = append(subEntries, se)
			}
		}
		entries = append(append(entries, e), subEntries...)
	}
	top.words = append(top.words, compWord{"help", "print a command's usage and flags"})
	return append([]compEntry{top, help}, entries...)
}

var (
	subcommandWord  = lazyRegexp(`^[a-z][a-z-]*$`)
	placeholderWord = lazyRegexp(`^[A-Z]+$`)
)

// subcommands are the lower-case words that open a command's usage, before its first
// placeholder or flag: "kafka|bigquery [flags]" gives kafka and bigquery.
func subcommands(usage string) []string {
	var subs []string
	for _, w := range strings.FieldsFunc(usage, func(r rune) bool { return r == '|' || r == ' ' }) {
		switch {
		case subcommandWord().MatchString(w):
			subs = append(subs, w)
		case placeholderWord().MatchString(w): // describe NAME
		default:
			return subs
		}
	}
	return subs
}

// helpFlagLine matches a flag in Go's flag.PrintDefaults: "  -name type" then the usage
// indented on the next line, or on the same line after a tab for a one-letter name.
var helpFlagLine = lazyRegexp(`(?m)^  -([A-Za-z0-9][A-Za-z0-9_-]*)(?: (\S+))?(?:\t|\n    \t)(.*)$`)

// helpFlags runs the command's --help (after sub, for `dev kafka`) in process and returns
// the flags it lists.
func helpFlags(c command, sub []string) []compFlag {
	var out bytes.Buffer
	commandHelp(c, append(slices.Clone(sub), "--help"), &out)
	var flags []compFlag
	for _, m := range helpFlagLine().FindAllStringSubmatch(out.String(), -1) {
		flags = append(flags, compFlag{name: m[1], value: m[2] != "", usage: m[3]})
	}
	return flags
}

func flagSpellings(flags []compFlag, valued bool) string {
	var s []string
	for _, f := range flags {
		if !valued || f.value {
			s = append(s, f.spelling())
		}
	}
	return strings.Join(s, " ")
}

// subcommandPattern is a case pattern (bash's and zsh's) that matches the keys of the
// entries two words deep: 'dev kafka'|'dev bigquery'|...
func subcommandPattern(entries []compEntry) string {
	var deep []string
	for _, e := range entries {
		if len(e.path) == 2 {
			deep = append(deep, shQuote(e.key()))
		}
	}
	return strings.Join(deep, "|")
}

// writeBashCompletion writes a function that finds the entry of the words typed so far
// ("dev kafka" when the second word is one of dev's subcommands), then offers its flags
// after a "-", its words in the position after its path, and files otherwise
// (complete -o default), as after a flag that takes a value.
func writeBashCompletion(w io.Writer, entries []compEntry) {
	fmt.Fprint(w, `# bash completion for sluice, generated by "sluice completion bash".
# Load it with: source <(sluice completion bash)
# or save it as /etc/bash_completion.d/sluice (or ~/.local/share/bash-completion/completions/sluice).
_sluice() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
  local key="" depth=0 words="" flags="" valued=""
  if ((COMP_CWORD > 1)); then key=${COMP_WORDS[1]} depth=1; fi
  if ((COMP_CWORD > 2)); then
    case "$key ${COMP_WORDS[2]}" in
`)
	fmt.Fprintf(w, "      %s) key=\"$key ${COMP_WORDS[2]}\" depth=2 ;;\n", subcommandPattern(entries))
	fmt.Fprint(w, "    esac\n  fi\n  case $key in\n")
	for _, e := range entries {
		fmt.Fprintf(w, "    %s) words=%s flags=%s valued=%s ;;\n", shQuote(e.key()), shQuote(strings.Join(e.wordNames(), " ")),
			shQuote(flagSpellings(e.flags, false)), shQuote(flagSpellings(e.flags, true)))
	}
	fmt.Fprint(w, `  esac
  COMPREPLY=()
  if [[ " $valued " == *" $prev "* ]]; then return; fi # a flag's value: files
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  elif ((COMP_CWORD == depth + 1)); then
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  fi
}
complete -o default -F _sluice sluice
`)
}

// writeZshCompletion writes a function for zsh's completion system: the commands with their
// summaries, then for the entry of the words typed (words shifted past its path) _arguments
// with its flags and words, and files for the rest.
func writeZshCompletion(w io.Writer, entries []compEntry) {
	fmt.Fprint(w, `#compdef sluice
# zsh completion for sluice, generated by "sluice completion zsh".
# Load it with: source <(sluice completion zsh)
# or save it as _sluice in a directory of $fpath, before compinit runs.
_sluice() {
  local key="" depth=0
  if ((CURRENT > 2)); then key=${words[2]} depth=1; fi
  if ((CURRENT > 3)); then
    case "$key ${words[3]}" in
`)
	fmt.Fprintf(w, "      (%s) key=\"$key ${words[3]}\" depth=2 ;;\n", subcommandPattern(entries))
	fmt.Fprint(w, "    esac\n  fi\n  words=(\"${(@)words[depth+1,-1]}\")\n  ((CURRENT -= depth))\n  case $key in\n")
	for _, e := range entries {
		fmt.Fprintf(w, "    (%s)\n", shQuote(e.key()))
		if len(e.words) > 0 {
			var alts []string
			for _, word := range e.words {
				alts = append(alts, shQuote(strings.ReplaceAll(word.name, ":", `\:`)+":"+word.summary))
			}
			fmt.Fprintf(w, "      local -a next=(%s)\n", strings.Join(alts, " "))
			fmt.Fprint(w, "      if ((CURRENT == 2)) && [[ $PREFIX != -* ]]; then _describe word next; return; fi\n")
		}
		specs := []string{}
		for _, f := range e.flags {
			desc := "[" + zshEscape(f.usage) + "]"
			if f.value {
				specs = append(specs, shQuote(f.spelling()+"="+desc+":"+f.name+":_files"))
			} else {
				specs = append(specs, shQuote(f.spelling()+desc))
			}
		}
		specs = append(specs, shQuote("*:file:_files"))
		fmt.Fprintf(w, "      _arguments \\\n        %s ;;\n", strings.Join(specs, " \\\n        "))
	}
	fmt.Fprint(w, `  esac
}
if [[ $funcstack[1] == _sluice ]]; then
  _sluice "$@"
else
  compdef _sluice sluice
fi
`)
}

// zshEscape escapes what _arguments reads in a description: brackets, colons, backslashes.
func zshEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`, ":", `\:`).Replace(s)
}

// shQuote quotes s for bash and zsh in single quotes.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// writeFishCompletion writes `complete` lines: the commands while none is given, then per
// entry its words while none of them is given, and its flags.
func writeFishCompletion(w io.Writer, entries []compEntry) {
	fmt.Fprint(w, `# fish completion for sluice, generated by "sluice completion fish".
# Load it with: sluice completion fish | source
# or save it as ~/.config/fish/completions/sluice.fish.
`)
	for _, e := range entries {
		var cond []string
		if e.key() == "" {
			cond = []string{"__fish_use_subcommand"}
		}
		for _, p := range e.path {
			cond = append(cond, "__fish_seen_subcommand_from "+p)
		}
		if len(e.words) > 0 && e.key() != "" {
			cond = append(cond, "not __fish_seen_subcommand_from "+strings.Join(e.wordNames(), " "))
		}
		n := fishQuote(strings.Join(cond, "; and "))
		for _, word := range e.words {
			fmt.Fprintf(w, "complete -c sluice -n %s -f -a %s -d %s\n", n, fishQuote(word.name), fishQuote(word.summary))
		}
		if e.key() == "" { // flags before a command: those of sluice itself
			cond = []string{"__fish_use_subcommand"}
		} else if len(e.words) > 0 {
			cond = cond[:len(cond)-1]
		}
		n = fishQuote(strings.Join(cond, "; and "))
		for _, f := range e.flags {
			opt := "-l " + f.name
			if len(f.name) == 1 {
				opt = "-s " + f.name
			}
			if f.value {
				opt += " -r"
			}
			fmt.Fprintf(w, "complete -c sluice -n %s %s -d %s\n", n, opt, fishQuote(f.usage))
		}
	}
}

// fishQuote quotes s for fish in single quotes, where only \ and ' are escaped.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}
