package report

import "testing"

// A fleet's processes all read INFO on the same servers: the merged split of the commands
// is their mean, per acquire of all processes together, as Commands is; one process
// without the split (a server that refused COMMAND INFO) leaves the merge without it.
func TestMergeRedisCommandSplit(t *testing.T) {
	split := func(data, scripts uint64) *Result {
		return &Result{Redis: RedisCost{Measured: true, Commands: data + scripts + 10, CommandsSplit: true, DataCommands: data, ScriptCalls: scripts}}
	}
	c := mergeRedis([]*Result{split(3000, 2000), split(3100, 2100)}, 1000)
	if !c.CommandsSplit || c.DataCommands != 3050 || c.ScriptCalls != 2050 || c.DataCommandsPerAcquire != 3.05 || c.ScriptCallsPerAcquire != 2.05 {
		t.Errorf("merged %+v: want the split's mean, 3050 data commands and 2050 script calls, 3.05 and 2.05 per acquire", c)
	}
	without := split(3000, 2000)
	without.Redis.CommandsSplit, without.Redis.DataCommands, without.Redis.ScriptCalls = false, 0, 0
	c = mergeRedis([]*Result{split(3000, 2000), without}, 1000)
	if c.CommandsSplit || c.DataCommands != 0 || c.DataCommandsPerAcquire != 0 || c.ScriptCallsPerAcquire != 0 {
		t.Errorf("merged with a process without the split: %+v; want no split", c)
	}
}
