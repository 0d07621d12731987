package workload

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/report"
)

// The errors a real Redis gives a user whose ACL lacks a right, and those of a server that
// does not answer or is gone, sort into their kinds; a denied one names the right to grant.
func TestClassifyErrors(t *testing.T) {
	t.Parallel()
	srv, admin := redistest.Server(t)
	ctx := context.Background()
	for _, u := range [][]string{
		{"nochan", "on", ">pw", "~lockbench*", "resetchannels", "+@all"},
		{"noscript", "on", ">pw", "~lockbench*", "&*", "+@all", "-@scripting"},
		{"nokeys", "on", ">pw", "~other*", "&*", "+@all"},
	} {
		if err := admin.Do(ctx, admin.B().AclSetuser().Username(u[0]).Rule(u[1:]...).Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	as := func(user string) rueidis.Client {
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr}, Username: user, Password: "pw", DisableCache: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}
	nochan, noscript, nokeys := as("nochan"), as("noscript"), as("nokeys")
	wrap := func(err error) error { return fmt.Errorf("token: key lockbench:1:{0}: %w", err) } // as strategies wrap
	sub, free := nochan.Dedicate()
	defer free()

	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := refused.Addr().String()
	refused.Close() // nothing listens there now
	_, dialErr := net.DialTimeout("tcp", addr, time.Second)
	expired, cancel := context.WithDeadline(ctx, time.Now())
	defer cancel()

	for _, tc := range []struct {
		name  string
		err   error
		kind  int
		right string
	}{
		{"SUBSCRIBE without the channel", sub.Do(ctx, sub.B().Subscribe().Channel("lockbench:turn:x").Build()).Error(), kindDenied, "&lockbench:*"},
		{"PUBLISH in a script without the channel", nochan.Do(ctx, nochan.B().Eval().Script("return redis.call('publish', KEYS[1], 'x')").Numkeys(1).Key("lockbench:x").Build()).Error(), kindDenied, "&lockbench:*"},
		{"EVALSHA without scripting", noscript.Do(ctx, noscript.B().Evalsha().Sha1("0123456789012345678901234567890123456789").Numkeys(0).Build()).Error(), kindDenied, "+@scripting"},
		{"SET without the key", nokeys.Do(ctx, nokeys.B().Set().Key("lockbench:x").Value("1").Build()).Error(), kindDenied, "~lockbench:*"},
		{"a deadline on the call", admin.Do(expired, admin.B().Ping().Build()).Error(), kindTimeout, ""},
		{"connection refused", dialErr, kindUnreachable, ""},
	} {
		if tc.err == nil {
			t.Errorf("%s: no error from the server", tc.name)
			continue
		}
		kind, right := classify(wrap(tc.err), "&lockbench:*")
		if kind != tc.kind || right != tc.right {
			t.Errorf("%s (%v): kind %s right %q, want %s %q", tc.name, tc.err, kindNames[kind], right, kindNames[tc.kind], tc.right)
		}
	}
	key := redistest.Prefix(t) + "list"
	if err := admin.Do(ctx, admin.B().Lpush().Key(key).Element("a").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	wrongType := admin.Do(ctx, admin.B().Incr().Key(key).Build()).Error()
	if kind, _ := classify(wrap(wrongType), ""); kind != kindServer {
		t.Errorf("WRONGTYPE (%v): kind %s, want server", wrongType, kindNames[kind])
	}
	if kind, _ := classify(errors.New("something local"), ""); kind != kindOther {
		t.Errorf("a client-side error: kind %s, want other", kindNames[kind])
	}
}

// errorCounts counts only what was recorded, keeps the first of each kind in order, and a
// failed probe adds to the result's errors.
func TestErrorCounts(t *testing.T) {
	var e errorCounts
	e.add(fmt.Errorf("x: %w", context.DeadlineExceeded), report.OpAcquire, "", false) // warm-up: kept, not counted
	e.add(errors.New("NOPERM this user has no permissions to run the 'evalsha' command"), report.OpRelease, "", true)
	e.add(errors.New("NOPERM this user has no permissions to run the 'evalsha' command"), report.OpRelease, "", true)
	if !e.probeFailed(fmt.Errorf("INFO: %w", context.DeadlineExceeded)) || e.probeFailed(errors.New("NOPERM no 'info'")) {
		t.Fatal("a probe that timed out is a failed probe; one refused is not")
	}
	r := report.Result{Errors: 2}
	e.fill(&r)
	if r.Errors != 3 || r.ErrorsByKind == nil || *r.ErrorsByKind != (report.ErrorKinds{Denied: 2, Timeout: 1}) {
		t.Errorf("errors %d by kind %+v; want 3: 2 denied, the probe's timeout", r.Errors, r.ErrorsByKind)
	}
	if len(r.FirstErrors) != 3 || r.FirstErrors[0].Kind != report.ErrorTimeout || r.FirstErrors[1].Right != "+@scripting" || r.FirstErrors[2].Op != report.OpProbe {
		t.Errorf("FirstErrors %+v", r.FirstErrors)
	}
}
