package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/strategies"
)

// The lock libraries are listed with their source (library and version) and the options
// they honour, in the table and in --format json; `--strategy all` does not run them.
func TestStrategiesListsTheLibraries(t *testing.T) {
	libs := []string{"redsync", "redsync-redlock", "redislock", "redislock-linear", "redislock-exp", "rueidislock"}
	code, stdout, _ := cli("strategies")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	header, rows, _ := strings.Cut(stdout, "\n")
	for _, col := range []string{"SERVICE", "SOURCE", "OPTIONS"} {
		if !strings.Contains(header, col) {
			t.Errorf("header lacks %s: %s", col, header)
		}
	}
	for _, line := range strings.Split(rows, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch {
		case slices.Contains(libs, f[0]):
			if !strings.Contains(line, "ttl, acquire-timeout, watchdog") || !regexpVersion(line) {
				t.Errorf("%s: want its library's version and the options it honours: %s", f[0], line)
			}
		case f[0] == "token":
			if !strings.Contains(line, " all ") || !strings.Contains(line, " Redis ") {
				t.Errorf("token: want service Redis and options all: %s", line)
			}
		}
	}
	code, stdout, _ = cli("strategies", "--format", "json")
	var infos []strategies.Info
	if err := json.Unmarshal([]byte(stdout), &infos); err != nil || code != exitOK {
		t.Fatalf("json: exit %d, %v", code, err)
	}
	found := 0
	for _, i := range infos {
		if !slices.Contains(libs, i.Name) {
			continue
		}
		found++
		if i.Fencing || !strings.Contains(i.Source, " v") || !slices.Contains(i.Applies, "ttl") || slices.Contains(i.Applies, "wait") {
			t.Errorf("%s: json %+v: want no fencing, a versioned source, options with ttl and without wait", i.Name, i)
		}
		if slices.Contains(strategies.Core(), i.Name) {
			t.Errorf("%s is among the core strategies that --strategy all runs", i.Name)
		}
	}
	if found != len(libs) {
		t.Errorf("json lists %d of the %d library strategies", found, len(libs))
	}
}

// regexpVersion reports whether line names a version such as v4.18.1.
func regexpVersion(line string) bool {
	for _, f := range strings.Fields(line) {
		if len(f) > 1 && f[0] == 'v' && strings.Count(f, ".") == 2 {
			return true
		}
	}
	return false
}

// Every strategy says how it waits under --wait native: the table's WAIT column shows the
// short form, --verbose and the json the whole line with its source.
func TestStrategiesShowTheNativeWait(t *testing.T) {
	code, stdout, _ := cli("strategies", "--format", "json")
	var infos []strategies.Info
	if err := json.Unmarshal([]byte(stdout), &infos); err != nil || code != exitOK {
		t.Fatalf("json: exit %d, %v", code, err)
	}
	if !strings.Contains(stdout, `"native_wait": "`) {
		t.Errorf("json lacks native_wait")
	}
	_, table, _ := cli("strategies")
	_, verbose, _ := cli("strategies", "--verbose")
	header, _, _ := strings.Cut(table, "\n")
	if !strings.Contains(header, " WAIT ") {
		t.Errorf("header lacks WAIT: %s", header)
	}
	for _, i := range infos {
		short := i.NativeWaitShort()
		if short == "" || short == i.NativeWait || len(short) > 24 {
			t.Errorf("%s: native wait %q: want a short form of at most 24 characters, then \": \" and the details", i.Name, i.NativeWait)
			continue
		}
		if row := rowOf(table, i.Name); !strings.Contains(row, "  "+short+"  ") || strings.Contains(row, i.NativeWait) {
			t.Errorf("%s: table row shows not just %q: %s", i.Name, short, row)
		}
		if row := rowOf(verbose, i.Name); !strings.Contains(row, i.NativeWait) {
			t.Errorf("%s: --verbose row lacks %q: %s", i.Name, i.NativeWait, row)
		}
	}
}

// rowOf returns the line of table whose first field is name.
func rowOf(table, name string) string {
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == name {
			return line
		}
	}
	return ""
}
