package redis

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/redis/rueidis"
)

// scriptCalls are the commands that run a script or a function: the split counts them
// apart from the data commands their scripts run, which INFO commandstats counts too.
var scriptCalls = map[string]bool{
	"eval": true, "evalsha": true, "eval_ro": true, "evalsha_ro": true, "fcall": true, "fcall_ro": true,
}

// keyed caches, per command name as commandstats spells it ("set", "client|setinfo"),
// whether the command acts on keys, as the server's COMMAND INFO says. Commands do not
// change their keys between servers of one run.
var keyed sync.Map // string -> bool

// CommandSplit is a window's commands by kind: Data are the commands on keys (SET, GET,
// DEL, HSET, ...), counted also when a script ran them; Scripts are the script and
// function calls (EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, FCALL, FCALL_RO). The other commands
// (PUBLISH, PING, CLIENT, a script's load) are in neither.
type CommandSplit struct {
	Data, Scripts uint64
}

// SplitCalls divides calls (a Cost's commandstats deltas) into data commands and script
// calls, asking c's COMMAND INFO once per process about each command name not yet known.
func SplitCalls(ctx context.Context, c rueidis.Client, calls map[string]uint64) (CommandSplit, error) {
	var ask []string
	for name := range calls {
		if _, known := keyed.Load(name); !known && !scriptCalls[name] {
			ask = append(ask, name)
		}
	}
	if len(ask) > 0 {
		slices.Sort(ask)
		var infos []rueidis.RedisMessage
		err := dedicatedDo(ctx, c, func(dc rueidis.DedicatedClient) error {
			var err error
			infos, err = dc.Do(ctx, dc.B().CommandInfo().CommandName(ask...).Build()).ToArray()
			return err
		})
		if err != nil {
			return CommandSplit{}, fmt.Errorf("COMMAND INFO: %w", err)
		}
		if len(infos) != len(ask) {
			return CommandSplit{}, fmt.Errorf("COMMAND INFO answered %d entries for %d commands", len(infos), len(ask))
		}
		for i, name := range ask {
			keyed.Store(name, hasKeys(infos[i]))
		}
	}
	var s CommandSplit
	for name, n := range calls {
		if scriptCalls[name] {
			s.Scripts += n
		} else if k, _ := keyed.Load(name); k == true {
			s.Data += n
		}
	}
	return s, nil
}

// hasKeys reads one COMMAND INFO entry: [name, arity, flags, first key, last key, step,
// (Redis 7:) ACL categories, tips, key specs, subcommands]. A command acts on keys when its
// first key's position is set, when it has a key spec not flagged not_key (Redis 7
// describes keys found by a count or a keyword there), or when its flags say movablekeys. A nil entry is a command
// the server does not know (none, since commandstats named it).
func hasKeys(m rueidis.RedisMessage) bool {
	f, err := m.ToArray()
	if err != nil || len(f) < 4 {
		return false
	}
	if first, err := f[3].AsInt64(); err == nil && first > 0 {
		return true
	}
	if len(f) > 8 {
		specs, _ := f[8].ToArray()
		for _, spec := range specs {
			m, err := spec.AsMap()
			if err != nil {
				return true
			}
			flags := m["flags"]
			if fl, _ := flags.AsStrSlice(); !slices.Contains(fl, "not_key") {
				return true // a key; a shard channel (SPUBLISH's) is not_key
			}
		}
	}
	flags, _ := f[2].AsStrSlice()
	return slices.Contains(flags, "movablekeys")
}
