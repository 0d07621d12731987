package proc

// The lock service packages register their temp names in init; these tests make
// directories under the names the lockbench binary registers.
func init() {
	RegisterTempNames("redis", "single", "redlock", "sentinel", "cluster", "etcd", "zookeeper", "postgres")
}
