package fleet

// A child's command line and environment: the flags the user gave, less the parent's own,
// plus where the target is and who the child is; the secret flags through the environment.

import (
	"encoding/json"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/session"
)

// Flag is a flag the user gave (or a profile set), with its values: several for a flag
// that repeats (--fault), one otherwise.
type Flag struct {
	Name   string
	Values []string
}

// Given are the flags set on fs, in its order: what a child is given, less the parent's own.
// Take them once the flags are resolved (a profile's values count as given).
func Given(fs *pflag.FlagSet) []Flag {
	var out []Flag
	fs.Visit(func(fl *pflag.Flag) {
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			out = append(out, Flag{Name: fl.Name, Values: slices.Clone(sv.GetSlice())})
			return
		}
		out = append(out, Flag{Name: fl.Name, Values: []string{fl.Value.String()}})
	})
	return out
}

// parentOnly are the flags that belong to the parent: its outputs, its target (replaced by
// what it spawned), its own process. Everything else a child gets as given.
var parentOnly = map[string]bool{
	"procs": true, "format": true, "out": true, "hdr-dir": true, "plot": true, "html": true, "live": true,
	"metrics-addr": true, "quiet": true, "cpuprofile": true, "memprofile": true,
	"fail-on-unsafe": true, "max-errors": true, "node": true, "barrier": true,
	"procs-child": true, "procs-phases": true,
}

// ChildTarget are the flags that send a child to the servers the parent opened: the Redis
// it spawned (or the one a `target up` state file names) and the services it spawned or
// dialled; replaced are the flags of the user's that these stand for. With --redis or
// --sentinel given, s.Redis is nil and the children reach Redis as the user said.
func ChildTarget(s *session.Session) (flags, replaced []string, err error) {
	if c := s.Redis; c != nil {
		if c.Mode == "embedded" {
			return nil, nil, usage.Errorf("--procs needs a Redis server the processes can share; the embedded one lives inside one process: install redis-server, or give --redis")
		}
		flags, replaced = c.Child()
	}
	sf, sr := s.ChildFlags()
	return append(flags, sf...), append(replaced, sr...), nil
}

// childArgs is the command line of child node of a fleet running phases seg: the flags
// the user gave, less the parent's own, plus where the target is, the extra flags
// (--name=value) of the segment, and who the child is.
// Values are passed as --name=value, so that none is mistaken for a flag. The flags a lock
// service declares secret (services.Service.Secrets: passwords, URLs that can carry one)
// are not on it: they are returned in secrets, which go to the child through its
// environment (SecretsEnv), out of ps's sight.
func (fl *Fleet) childArgs(seg Segment, node int, barrier, out string, extra []string) (args, secrets []string) {
	secret := services.SecretFlags()
	add := func(name, value string) {
		arg := "--" + name + "=" + value
		if slices.Contains(secret, name) {
			secrets = append(secrets, arg)
		} else {
			args = append(args, arg)
		}
	}
	args = []string{fl.spec.Command}
	for _, f := range fl.spec.Given {
		if parentOnly[f.Name] || slices.Contains(fl.replaced, f.Name) || slices.Contains(fl.spec.Drop, f.Name) {
			continue
		}
		for _, v := range f.Values {
			add(f.Name, v)
		}
	}
	for _, t := range append(slices.Clip(fl.target), extra...) {
		name, value, _ := strings.Cut(strings.TrimPrefix(t, "--"), "=")
		add(name, value)
	}
	return append(args,
		"--procs-child", "--procs-phases="+strconv.Itoa(seg.From)+":"+strconv.Itoa(seg.To),
		"--node="+strconv.Itoa(node)+"/"+strconv.Itoa(seg.Procs), "--barrier="+barrier,
		"--format=json", "--out="+out, "--quiet"), secrets
}

// SecretsEnv carries a --procs child's secret flags (childArgs), a JSON list of
// --name=value, from its parent's environment to its flags (TakeSecrets).
const SecretsEnv = "LOCKBENCH_PROCS_SECRETS"

// TakeSecrets sets, with set, the secret flags this child of a --procs fleet got through
// its environment, as if given on its command line, and clears them from the environment.
func TakeSecrets(set func(name, value string) error) error {
	raw, ok := os.LookupEnv(SecretsEnv)
	if !ok {
		return nil
	}
	_ = os.Unsetenv(SecretsEnv)
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		return usage.Errorf("$%s: not a JSON list of --name=value (it is set by --procs): %v", SecretsEnv, err)
	}
	for _, a := range args {
		name, value, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !slices.Contains(services.SecretFlags(), name) {
			return usage.Errorf("$%s: --%s is not a secret flag (it is set by --procs)", SecretsEnv, name)
		}
		if err := set(name, value); err != nil {
			return usage.Errorf("$%s: --%s: %v", SecretsEnv, name, err)
		}
	}
	return nil
}

// ChildEnv is the environment of one of procs children: env, and unless the user set
// GOMAXPROCS, each child's share of this machine's cores, but at least two (one on a machine
// of one core). The children stand for processes on machines of their own; N Go schedulers
// each sized for every core of one shared machine contend with each other and with Redis.
// But a Go process with one P stalls whole whenever its one running thread does — the
// kernel runs something else, a system call holds the P until sysmon hands it off (up to
// 10 ms), a goroutine's burst of CPU runs until it is preempted (10 ms) — and every worker
// waits: two children of GOMAXPROCS=1 on two cores had their goroutines wait 0.8-42 ms
// (p99) for their P, an open loop at 1,000/s read acquire p99 68-123 ms against 6-31 ms
// with two Ps each, and `capacity --procs 2` answered 227/s. (Four children of one P each
// were chosen when every holder spun its hold: the fleet hot key ran at 700-730/s with two
// Ps each against 785-839 with one. With the one hold timer, at load 27-31: 751 and 508/s
// with two, 495 and 375/s with one.)
func ChildEnv(env []string, procs int) []string {
	if os.Getenv("GOMAXPROCS") != "" {
		return env
	}
	share := max(min(2, runtime.NumCPU()), runtime.NumCPU()/procs)
	return append(slices.Clip(env), "GOMAXPROCS="+strconv.Itoa(share))
}
