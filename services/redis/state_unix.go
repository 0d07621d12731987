//go:build unix

package redis

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkStateFile says why a state file with fi is not safe to trust and what to do, "" when
// it is: it must belong to this user and be writable by no one else.
func checkStateFile(fi fs.FileInfo) (why, fix string) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Sprintf("owned by uid %d, not by this user (uid %d)", st.Uid, os.Getuid()),
			"give --state a file of your own"
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Sprintf("writable by group or others (mode %04o)", perm),
			"if nobody else changed it, chmod go-w it"
	}
	return "", ""
}
