package redact_test

import (
	"testing"

	"github.com/lockbench/lockbench/internal/redact"
)

func TestAddr(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"127.0.0.1:6379":                 "127.0.0.1:6379",
		"redis://h:1/2":                  "redis://h:1/2",
		"redis://alice:pw@h:1":           "redis://alice:***@h:1",
		"rediss://:pw@h:1/0":             "rediss://:***@h:1/0",
		"redis://pw@h:1":                 "redis://***@h:1",
		"redis://a:p@ss:w@h:1":           "redis://a:***@h:1",
		"redis://a:p/w#x@h:1":            "redis://a:***@h:1",
		"a:pw@h:1":                       "***@h:1",
		"redis://alice:pw@h:1,other":     "redis://alice:***@h:1,other",
		"http://alice:s3cret@host:2379":  "http://alice:***@host:2379",
		"zk://alice:s3cret@host":         "zk://alice:***@host",
		"postgres://alice:s3cret@host/d": "postgres://alice:***@host/d",
	} {
		if got := redact.Addr(in); got != want {
			t.Errorf("Addr(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParam(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"postgres://h/db":                         "postgres://h/db",
		"postgres://h/db?password=x2":             "postgres://h/db?password=***",
		"postgres://h/db?password=x2&sslmode=off": "postgres://h/db?password=***&sslmode=off",
		"host=h password=x2 dbname=d":             "host=h password=*** dbname=d",
	} {
		if got := redact.Param(in, "password"); got != want {
			t.Errorf("Param(%q) = %q, want %q", in, got, want)
		}
	}
}
