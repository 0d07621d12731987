package redis

import "strconv"

// StatusHeader is the header of `lockbench target status`' table; Row gives its rows.
var StatusHeader = []string{"ROLE", "ADDRESS", "PID", "ALIVE", "ANSWERING"}

// Row is n's row of `lockbench target status`' table (StatusHeader).
func (n NodeStatus) Row() []string {
	return []string{n.Role, n.Addr, strconv.Itoa(n.Pid), yesNo(n.Alive), yesNo(n.Answering)}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
