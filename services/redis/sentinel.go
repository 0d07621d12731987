package redis

import (
	"context"
	"fmt"
	"net"

	"github.com/redis/rueidis"
)

// SentinelMaster asks the sentinel at addr where the master of set name is now. It does not
// authenticate: it is for the sentinels lockbench spawns, which require no password.
func SentinelMaster(ctx context.Context, addr, name string) (string, error) {
	var master string
	err := withAdmin(ctx, addr, "", func(ctx context.Context, c rueidis.Client) error {
		hp, err := c.Do(ctx, c.B().SentinelGetMasterAddrByName().Master(name).Build()).AsStrSlice()
		if err != nil {
			return err
		}
		if len(hp) != 2 {
			return fmt.Errorf("sentinel %s: no master named %s", addr, name)
		}
		master = net.JoinHostPort(hp[0], hp[1])
		return nil
	})
	return master, err
}
