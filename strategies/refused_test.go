package strategies_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/strategies"
)

// A user without channel rights waits with pubsub: the server refuses the waiters'
// SUBSCRIBE, and every waiter hears the refusal as an error — the one that sent it and those
// that waited for its confirmation — rather than taking it for a broken connection and
// sleeping out its acquire timeout (issue 29: 1 acquire, 0 errors, safe).
func TestPubSubWaitersHearARefusedSubscribe(t *testing.T) {
	t.Parallel()
	srv, admin := redistest.Server(t)
	if err := admin.Do(context.Background(), admin.B().AclSetuser().Username("nochan").Rule("on", ">nc", "~*", "resetchannels", "+@all").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr}, Username: "nochan", Password: "nc", DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	s, err := strategies.New("token", strategies.Options{Client: c, Params: strategies.Params{TTL: strategies.TTLOf(time.Minute), Wait: strategies.Wait{Kind: strategies.WaitPubSub}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	key := redistest.Prefix(t) + "k"
	holder, err := s.Acquire(context.Background(), key, "holder") // uncontended: no SUBSCRIBE
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release(context.Background())

	// The waiters' acquire timeout is far beyond what the test waits for an answer: a waiter
	// still waiting when the test ends would fail it by its deadline, not by a clock.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const waiters = 8
	errs := make([]error, waiters)
	var wg sync.WaitGroup
	for i := range waiters {
		wg.Go(func() {
			l, err := s.Acquire(ctx, key, fmt.Sprintf("w%d", i))
			if l != nil {
				_ = l.Release(context.Background())
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err == nil || errors.Is(err, strategies.ErrNotAcquired) || !strings.Contains(err.Error(), "NOPERM") {
			t.Errorf("waiter %d: %v; want the server's NOPERM", i, err)
		}
	}
}
