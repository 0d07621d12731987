package redis_test

import "syscall"

// threadID is the calling thread's id (/proc/self/task/ID while it runs), or 0 where
// threads have none to look up.
func threadID() int { return syscall.Gettid() }
