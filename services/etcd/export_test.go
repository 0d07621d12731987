package etcd

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// Backend is c as the engine drives it: the Conn the registry hands out.
func Backend(c *Conn) workload.Backend { return c.adapt() }

// FailKeepAlives makes the keep-alives of s, an etcd-mutex not yet used, fail without
// reaching etcd while fail returns an error; the others go to etcd as usual.
func FailKeepAlives(s strategies.Strategy, fail func() error) {
	ka := s.(*mutex).ka
	ka.Lease = failing{Lease: ka.Lease, fail: fail}
}

type failing struct {
	clientv3.Lease
	fail func() error
}

func (f failing) KeepAliveOnce(ctx context.Context, id clientv3.LeaseID) (*clientv3.LeaseKeepAliveResponse, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	return f.Lease.KeepAliveOnce(ctx, id)
}
