package main

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/profiles"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/services/redis"
	"github.com/lockbench/lockbench/strategies"
)

const completionSynopsis = `Prints a shell completion script for bash, zsh or fish: commands, subcommands, every
command's flags, and the values of the flags that have a fixed set (strategies, formats,
profiles, wait policies, ...). The script is generated from the flags lockbench has, so
regenerate it after an upgrade.

  bash:  source <(lockbench completion bash)        # or save it in /etc/bash_completion.d/lockbench
  zsh:   lockbench completion zsh > "${fpath[1]}/_lockbench"   # then restart zsh (compinit)
  fish:  lockbench completion fish > ~/.config/fish/completions/lockbench.fish`

// completionShells are the shells completion writes a script for.
var completionShells = []string{"bash", "zsh", "fish"}

func completionCmd(args []string, stdout, _ io.Writer) error {
	fs := newFlags("completion bash|zsh|fish", completionSynopsis, stdout)
	if err := fs.Parse(args); err != nil {
		if isHelp(err) {
			return err // pflag has printed the usage
		}
		return &usageError{err}
	}
	if fs.NArg() != 1 || !slices.Contains(completionShells, fs.Arg(0)) {
		return usageErrorf("want one shell: %s", strings.Join(completionShells, ", "))
	}
	cmds := completionSpec()
	switch fs.Arg(0) {
	case "bash":
		return writeBash(stdout, cmds)
	case "zsh":
		return writeZsh(stdout, cmds)
	default:
		return writeFish(stdout, cmds)
	}
}

// compCommand is a command or subcommand as completion sees it.
type compCommand struct {
	name, summary string
	flags         []compFlag
	subs          []compCommand
}

// compFlag is one flag: its names, whether it takes a value, the values it can take when
// they are a fixed set, and whether the value is a file (or directory).
type compFlag struct {
	name, short, usage string
	takesValue         bool
	values             []string
	list               bool // a comma-separated list of values (--strategy a,b)
	file, dir          bool
}

// subcommands are the words that follow these commands; each one's flags come from its
// own --help.
var subcommands = map[string][]string{
	"report":     {"plot", "compare", "merge"},
	"target":     {"up", "down", "status"},
	"profiles":   {"list", "show"},
	"completion": completionShells,
}

// completionSpec reads every command's flags from its --help: the usage pflag prints from
// the command's real flag set, so a flag added to a command is completed without anything
// else to update.
func completionSpec() []compCommand {
	var out []compCommand
	for _, c := range commands() {
		cc := compCommand{name: c.name, summary: c.summary, flags: helpFlags(c, nil)}
		for _, sub := range subcommands[c.name] {
			cc.subs = append(cc.subs, compCommand{name: sub, flags: helpFlags(c, []string{sub})})
		}
		out = append(out, cc)
	}
	return out
}

// flagLine is a flag's first line in pflag's usage: "  -s, --name type   usage" or
// "      --name type   usage" (continuation lines are indented further).
var flagLine = regexp.MustCompile(`^(?:  -(\w), |      )--([a-z0-9][a-z0-9-]*)(?: (\S+))?(?:  +(.*))?$`)

func helpFlags(c command, sub []string) []compFlag {
	if c.name == "completion" && len(sub) > 0 {
		return nil // the shells take no flags; and do not generate while generating
	}
	var buf bytes.Buffer
	_ = c.run(append(sub, "--help"), &buf, io.Discard)
	_, text, ok := strings.Cut(buf.String(), "Flags:\n")
	if !ok {
		return []compFlag{{name: "help", short: "h", usage: "show the command's usage"}}
	}
	var flags []compFlag
	for _, line := range strings.Split(text, "\n") {
		m := flagLine.FindStringSubmatch(line)
		if m == nil {
			if len(flags) > 0 && strings.TrimSpace(line) != "" { // the usage wrapped
				flags[len(flags)-1].usage += " " + strings.TrimSpace(line)
			}
			continue
		}
		f := compFlag{short: m[1], name: m[2], takesValue: m[3] != "", usage: m[4]}
		completeValues(c.name, &f, m[3])
		flags = append(flags, f)
	}
	return append(flags, compFlag{name: "help", short: "h", usage: "show the command's usage"})
}

// fileFlags take a path; dirFlags a directory.
var (
	fileFlags = []string{"out", "plot", "live", "cpuprofile", "memprofile", "profile", "state", "tls-ca-cert", "tls-cert", "tls-key"}
	dirFlags  = []string{"hdr-dir"}
)

// completeValues fills in what f's value can be: a fixed set for the load commands'
// enumerated flags and for any flag whose value name lists its choices (off|auto|DUR).
func completeValues(cmd string, f *compFlag, valueName string) {
	if !f.takesValue {
		return
	}
	f.file, f.dir = slices.Contains(fileFlags, f.name), slices.Contains(dirFlags, f.name)
	load := cmd == "run" || cmd == "sweep" || cmd == "capacity"
	switch {
	case load && f.name == "strategy":
		f.values, f.list = append(strategies.Names(), "all"), true
	case load && f.name == "format":
		f.values = report.Formats()
	case load && f.name == "profile":
		for _, p := range profiles.Builtins() {
			f.values = append(f.values, p.Name)
		}
	case load && f.name == "wait":
		f.values = []string{"spin", "backoff", "pubsub"}
	case load && f.name == "key-dist":
		f.values = []string{"uniform", "zipf"}
	case load && f.name == "fault":
		f.values = faultKinds()
	case (load || cmd == "target") && f.name == "topology":
		f.values = redis.Topologies()
	case cmd == "sweep" && f.name == "param":
		f.values = []string{"ttl=", "watchdog=", "wait=", "workers=", "keys=", "hold=", "rate="}
	case strings.Contains(valueName, "|"):
		for _, v := range strings.Split(valueName, "|") {
			if v == strings.ToLower(v) && v != "" {
				f.values = append(f.values, v)
			}
		}
	}
}

// shellQuote quotes s for a POSIX shell (and fish and zsh) in single quotes.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// bashHelpers are the script's functions that fill COMPREPLY. compgen prints one candidate a
// line, and they read it line by line so a name with spaces stays one candidate; paths ask
// bash for -o filenames (quote the name, a / and no space after a directory). pre is what
// the word has before the value (--flag= when bash did not split the word at the =).
const bashHelpers = `# _lockbench_add appends compgen's candidates, one a line.
_lockbench_add() {
	local line
	while IFS= read -r line; do COMPREPLY+=("$line"); done < <(compgen "$@")
}

# _lockbench_files pre cur [-d]: files (or directories) named as the word is typed (a\ b).
_lockbench_files() {
	local word=$2 name= i
	compopt -o filenames 2>/dev/null
	case $word in
	[\"\']*) name=${word:1} ;;
	*) for ((i = 0; i < ${#word}; i++)); do
		[[ ${word:i:1} == \\ ]] && ((i++))
		name+=${word:i:1}
	done ;;
	esac
	_lockbench_add -P "$1" "${3:--f}" -- "$name"
}

# _lockbench_list pre values cur: a comma list (a,b,c) completes after its last comma.
_lockbench_list() {
	local pre=$1 cur=$3
	[[ $cur == *,* ]] && pre+=${cur%,*}, cur=${cur##*,}
	_lockbench_add -P "$pre" -W "$2" -- "$cur"
}

`

func writeBash(w io.Writer, cmds []compCommand) error {
	var b strings.Builder
	b.WriteString("# bash completion for lockbench; generated by 'lockbench completion bash'.\n" +
		"# Load it with: source <(lockbench completion bash)\n\n")
	b.WriteString(bashHelpers)
	b.WriteString("# _lockbench_flag_values cmd flag cur pre: the values of cmd's flag; 1 if it has no fixed set.\n" +
		"_lockbench_flag_values() {\n\tlocal cur=$3 pre=$4\n\tcase \"$1 $2\" in\n")
	seen := map[string]bool{}
	for _, c := range allCommands(cmds) {
		for _, f := range c.flags {
			if !f.takesValue || (len(f.values) == 0 && !f.file && !f.dir) {
				continue
			}
			pattern := c.top + " --" + f.name
			if f.short != "" {
				pattern += "|" + c.top + " -" + f.short
			}
			if seen[pattern] {
				continue
			}
			seen[pattern] = true
			fmt.Fprintf(&b, "\t%s)\n", bashPattern(pattern))
			values := shellQuote(strings.Join(f.values, " "))
			switch {
			case f.dir:
				b.WriteString("\t\t_lockbench_files \"$pre\" \"$cur\" -d ;;\n")
			case f.file && len(f.values) > 0:
				fmt.Fprintf(&b, "\t\t_lockbench_add -P \"$pre\" -W %s -- \"$cur\"\n\t\t_lockbench_files \"$pre\" \"$cur\" ;;\n", values)
			case f.file:
				b.WriteString("\t\t_lockbench_files \"$pre\" \"$cur\" ;;\n")
			case f.list:
				fmt.Fprintf(&b, "\t\t_lockbench_list \"$pre\" %s \"$cur\" ;;\n", values)
			default:
				fmt.Fprintf(&b, "\t\t_lockbench_add -P \"$pre\" -W %s -- \"$cur\" ;;\n", values)
			}
		}
	}
	b.WriteString("\t*) return 1 ;;\n\tesac\n}\n\n")

	// --flag=value: with = in COMP_WORDBREAKS (the default) bash splits it into the words
	// "--flag" "=" "value" and the word under the cursor is the value, or the "=" itself
	// right after it; without, the word is "--flag=value" and every candidate must repeat
	// "--flag=". After an =, only the flag's values make sense.
	b.WriteString("_lockbench() {\n" +
		"\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n" +
		"\tlocal cmd=${COMP_WORDS[1]} sub= words=\n" +
		"\tCOMPREPLY=()\n" +
		"\tif ((COMP_CWORD == 1)); then\n" +
		"\t\t_lockbench_add -W " + shellQuote(strings.Join(names(cmds), " ")) + " -- \"$cur\"\n" +
		"\t\treturn\n\tfi\n" +
		"\tif [[ $cur == = && $prev == -* ]]; then\n" +
		"\t\t_lockbench_flag_values \"$cmd\" \"$prev\" \"\" \"\"\n\t\treturn\n" +
		"\telif [[ $prev == = ]] && ((COMP_CWORD > 3)) && [[ ${COMP_WORDS[COMP_CWORD-2]} == -* ]]; then\n" +
		"\t\t_lockbench_flag_values \"$cmd\" \"${COMP_WORDS[COMP_CWORD-2]}\" \"$cur\" \"\"\n\t\treturn\n" +
		"\telif [[ $cur == -*=* ]]; then\n" +
		"\t\t_lockbench_flag_values \"$cmd\" \"${cur%%=*}\" \"${cur#*=}\" \"${cur%%=*}=\"\n\t\treturn\n" +
		"\tfi\n" +
		"\t((COMP_CWORD > 2)) && [[ ${COMP_WORDS[2]} != -* ]] && sub=${COMP_WORDS[2]}\n" +
		"\tif [[ $prev == -* ]] && _lockbench_flag_values \"$cmd\" \"$prev\" \"$cur\" \"\"; then\n\t\treturn\n\tfi\n" +
		"\tcase \"$cmd\" in\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "\t%s)\n", c.name)
		if len(c.subs) > 0 {
			b.WriteString("\t\tcase \"$sub\" in\n")
			for _, s := range c.subs {
				fmt.Fprintf(&b, "\t\t%s) words=%s ;;\n", s.name, shellQuote(flagWords(s.flags)))
			}
			fmt.Fprintf(&b, "\t\t*) ((COMP_CWORD == 2)) && [[ $cur != -* ]] && words=%s || words=%s ;;\n\t\tesac ;;\n",
				shellQuote(strings.Join(names(c.subs), " ")), shellQuote(flagWords(c.flags)))
			continue
		}
		fmt.Fprintf(&b, "\t\twords=%s ;;\n", shellQuote(flagWords(c.flags)))
	}
	b.WriteString("\tesac\n\t_lockbench_add -W \"$words\" -- \"$cur\"\n}\n\ncomplete -o default -F _lockbench lockbench\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// bashPattern turns "run --out|run -o" into a case pattern: each alternative quoted.
func bashPattern(p string) string {
	alts := strings.Split(p, "|")
	for i, a := range alts {
		alts[i] = `"` + a + `"`
	}
	return strings.Join(alts, "|")
}

// flatCommand is a command or subcommand with the top-level command it is under.
type flatCommand struct {
	top string
	compCommand
}

func allCommands(cmds []compCommand) []flatCommand {
	var out []flatCommand
	for _, c := range cmds {
		out = append(out, flatCommand{c.name, c})
		for _, s := range c.subs {
			out = append(out, flatCommand{c.name, s})
		}
	}
	return out
}

func names(cmds []compCommand) []string {
	var out []string
	for _, c := range cmds {
		out = append(out, c.name)
	}
	return out
}

func flagWords(flags []compFlag) string {
	var out []string
	for _, f := range flags {
		out = append(out, "--"+f.name)
		if f.short != "" {
			out = append(out, "-"+f.short)
		}
	}
	return strings.Join(out, " ")
}

// firstClause is a flag's usage cut for a menu: its first clause.
func firstClause(usage string) string {
	s, _, _ := strings.Cut(usage, ";")
	s, _, _ = strings.Cut(s, " (")
	return strings.TrimSpace(s)
}

// zshDescribe is name:description for _describe, whose separator is the colon.
func zshDescribe(name, desc string) string {
	return name + ":" + strings.ReplaceAll(desc, ":", `\:`)
}

func writeZsh(w io.Writer, cmds []compCommand) error {
	var b strings.Builder
	b.WriteString("#compdef lockbench\n# zsh completion for lockbench; generated by 'lockbench completion zsh'.\n" +
		"# Save it as _lockbench in a directory of $fpath, or: source <(lockbench completion zsh)\n\n")
	b.WriteString("_lockbench() {\n\tlocal cur=${words[CURRENT]} prev=${words[CURRENT-1]} cmd=${words[2]} sub= eq=\n" +
		"\tlocal -a items\n" +
		"\tif (( CURRENT == 2 )); then\n\t\titems=(\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "\t\t\t%s\n", shellQuote(zshDescribe(c.name, c.summary)))
	}
	// --flag=value: compset moves "--flag=" out of the word (to IPREFIX), so the value's
	// completion (_files, _values) sees the value alone and zsh puts "--flag=" back.
	b.WriteString("\t\t)\n\t\t_describe command items\n\t\treturn\n\tfi\n" +
		"\t(( CURRENT > 3 )) && [[ ${words[3]} != -* ]] && sub=${words[3]}\n" +
		"\tif [[ $cur == -*=* ]]; then\n\t\tprev=${cur%%=*} eq=1\n\t\tcompset -P 1 '*='\n\tfi\n" +
		"\tcase \"$cmd $prev\" in\n")
	seen := map[string]bool{}
	for _, c := range allCommands(cmds) {
		for _, f := range c.flags {
			if !f.takesValue || (len(f.values) == 0 && !f.file && !f.dir) {
				continue
			}
			pattern := bashPattern(c.top + " --" + f.name)
			if f.short != "" {
				pattern += "|" + bashPattern(c.top+" -"+f.short)
			}
			if seen[pattern] {
				continue
			}
			seen[pattern] = true
			fmt.Fprintf(&b, "\t%s)\n", pattern)
			switch {
			case f.dir:
				b.WriteString("\t\t_files -/; return ;;\n")
			case f.file && len(f.values) > 0:
				fmt.Fprintf(&b, "\t\t_alternative %s 'files:file:_files'; return ;;\n", shellQuote(f.name+":"+f.name+":("+strings.Join(f.values, " ")+")"))
			case f.file:
				b.WriteString("\t\t_files; return ;;\n")
			case f.list:
				fmt.Fprintf(&b, "\t\t_values -s , %s %s; return ;;\n", shellQuote(f.name), strings.Join(quoteAll(f.values), " "))
			default:
				fmt.Fprintf(&b, "\t\tcompadd -- %s; return ;;\n", strings.Join(quoteAll(f.values), " "))
			}
		}
	}
	b.WriteString("\tesac\n\t[[ -n $eq ]] && return 1 # a value without a fixed set\n\tcase \"$cmd\" in\n")
	writeItems := func(indent string, flags []compFlag) {
		b.WriteString(indent + "items=(\n")
		for _, f := range flags {
			fmt.Fprintf(&b, "%s\t%s\n", indent, shellQuote(zshDescribe("--"+f.name, firstClause(f.usage))))
			if f.short != "" {
				fmt.Fprintf(&b, "%s\t%s\n", indent, shellQuote(zshDescribe("-"+f.short, firstClause(f.usage))))
			}
		}
		b.WriteString(indent + ")\n")
	}
	for _, c := range cmds {
		fmt.Fprintf(&b, "\t%s)\n", c.name)
		if len(c.subs) > 0 {
			fmt.Fprintf(&b, "\t\tif (( CURRENT == 3 )) && [[ $cur != -* ]]; then\n\t\t\tcompadd -- %s\n\t\t\treturn\n\t\tfi\n\t\tcase \"$sub\" in\n", strings.Join(names(c.subs), " "))
			for _, s := range c.subs {
				fmt.Fprintf(&b, "\t\t%s)\n", s.name)
				writeItems("\t\t\t", s.flags)
				b.WriteString("\t\t\t;;\n")
			}
			b.WriteString("\t\t*)\n")
			writeItems("\t\t\t", c.flags)
			b.WriteString("\t\t\t;;\n\t\tesac ;;\n")
			continue
		}
		writeItems("\t\t", c.flags)
		b.WriteString("\t\t;;\n")
	}
	b.WriteString("\tesac\n\t_describe -o flag items\n}\n\n" +
		"if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n\t_lockbench \"$@\"\nelse\n\tcompdef _lockbench lockbench\nfi\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func quoteAll(vs []string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = shellQuote(v)
	}
	return out
}

// fishList offers a comma list's values (--strategy a,b) each after what the word has up
// to its last comma; fish matches candidates against the whole word, and puts back a
// --flag= or -s it took off.
const fishList = `function __lockbench_list
	set -l word (commandline -ct | string replace -r -- '^(--[^=]*=|-[^-])' '')
	set -l pre (string match -r -- '^.*,' $word)
	for v in $argv
		printf '%s%s\n' "$pre" $v
	end
end

`

func writeFish(w io.Writer, cmds []compCommand) error {
	var b strings.Builder
	b.WriteString("# fish completion for lockbench; generated by 'lockbench completion fish'.\n" +
		"# Save it as ~/.config/fish/completions/lockbench.fish\n\n" +
		"complete -c lockbench -f\n\n" + fishList)
	for _, c := range cmds {
		fmt.Fprintf(&b, "complete -c lockbench -n __fish_use_subcommand -a %s -d %s\n", c.name, shellQuote(c.summary))
	}
	flagLines := func(cond string, flags []compFlag) {
		for _, f := range flags {
			fmt.Fprintf(&b, "complete -c lockbench -n %s -l %s", shellQuote(cond), f.name)
			if f.short != "" {
				fmt.Fprintf(&b, " -s %s", f.short)
			}
			switch {
			case !f.takesValue:
			case f.dir:
				b.WriteString(" -r -a '(__fish_complete_directories)'")
			case f.file:
				b.WriteString(" -r -F")
				if len(f.values) > 0 {
					fmt.Fprintf(&b, " -a %s", shellQuote(strings.Join(f.values, " ")))
				}
			case f.list:
				fmt.Fprintf(&b, " -x -a %s", shellQuote("(__lockbench_list "+strings.Join(f.values, " ")+")"))
			case len(f.values) > 0:
				fmt.Fprintf(&b, " -x -a %s", shellQuote(strings.Join(f.values, " ")))
			default:
				b.WriteString(" -x")
			}
			fmt.Fprintf(&b, " -d %s\n", shellQuote(firstClause(f.usage)))
		}
	}
	for _, c := range cmds {
		in := "__fish_seen_subcommand_from " + c.name
		if len(c.subs) == 0 {
			flagLines(in, c.flags)
			continue
		}
		subNames := strings.Join(names(c.subs), " ")
		fmt.Fprintf(&b, "complete -c lockbench -n %s -a %s\n", shellQuote(in+"; and not __fish_seen_subcommand_from "+subNames), shellQuote(subNames))
		flagLines(in+"; and not __fish_seen_subcommand_from "+subNames, c.flags)
		for _, s := range c.subs {
			flagLines(in+"; and __fish_seen_subcommand_from "+s.name, s.flags)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
