//go:build !linux

package redis_test

// threadID is the calling thread's id (/proc/self/task/ID while it runs), or 0 where
// threads have none to look up.
func threadID() int { return 0 }
