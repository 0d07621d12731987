package zookeeper

import (
	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/workload"
)

// Backend is c as the engine drives it: the Conn the registry hands out.
func Backend(c *Conn) workload.Backend { return c.adapt(services.Need{}) }
