package main

import "github.com/spf13/pflag"

// serviceFlags say where the lock services other than Redis are, for the strategies that
// run on them (etcd-mutex, zk-lock, pg-advisory). Without an address lockbench spawns a
// private server on loopback for a run that needs one, and stops it afterwards.
type serviceFlags struct {
	etcd, zookeeper, postgres string
	etcdMembers               int
}

func (s *serviceFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&s.etcd, "etcd", "", "etcd for etcd-mutex: host:port or http://[user:password@]host:port, comma-separated for a cluster (default: spawn etcd on loopback)")
	fs.IntVar(&s.etcdMembers, "etcd-members", 1, "members of the etcd cluster spawned without --etcd: 1, or 3 or 5 for a quorum")
	fs.StringVar(&s.zookeeper, "zookeeper", "", "ZooKeeper for zk-lock: host:port[,host:port...] or zk://[user:password@]host:port (default: spawn one on loopback)")
	fs.StringVar(&s.postgres, "postgres", "", "PostgreSQL for pg-advisory: postgres://[user[:password]@]host[:port][/database] (default: initdb and start one on loopback)")
}
