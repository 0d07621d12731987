package libs_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/strategies"
)

// rueidislock's unlock returns nothing, and its delete is a compare-and-delete: a release
// after the lock's keys lapsed and were taken leaves them to their new holder. The adapter
// reads what Redis answered the deletes: the release is ErrNotOwner once fewer than a
// majority of the keys were still the holder's (it used to be a success whenever the library
// had not noticed yet — a misdelete for the oracle, with a successor inside), and a success
// while a majority was.
//
// Over RESP2 the library gets no invalidation, and with a renewal every minute it does not
// notice the takeover before the release: only the deletes' answers can tell.
func TestRueidislockReleaseReadsTheDeletes(t *testing.T) {
	conn := spawn(t, "single")
	for _, tc := range []struct {
		name    string
		taken   []int // the keys rueidislock:<i>:<name> another holder takes
		wantErr error
	}{
		{"rueidislock-readme", []int{0}, strategies.ErrNotOwner},
		{"rueidislock", []int{0, 2}, strategies.ErrNotOwner},
		{"rueidislock", []int{1}, nil},
		{"rueidislock", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := strategies.Options{Params: strategies.Params{TTL: strategies.TTLOf(2 * time.Minute), Watchdog: strategies.Watchdog{Interval: time.Minute}}}
			backend(conn).Configure(&o)
			o.Connect.AlwaysRESP2 = true
			s, err := strategies.New(tc.name, o)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			key := redistest.Prefix(t) + "k"
			l, err := s.Acquire(ctx, key, "a")
			if err != nil {
				t.Fatal(err)
			}
			c := conn.Client
			// The library takes the keys past its majority in the background: wait for them.
			keys := c.B().Exists().Key(allKeys(tc.name, key)...).Build().Pin()
			for {
				n, err := c.Do(ctx, keys).AsInt64()
				if err != nil {
					t.Fatal(err)
				}
				if n == int64(len(allKeys(tc.name, key))) {
					break
				}
				select {
				case <-ctx.Done():
					t.Fatalf("%d of the lock's keys set after 30 s", n)
				case <-time.After(10 * time.Millisecond):
				}
			}
			for _, i := range tc.taken {
				k := "rueidislock:" + string(rune('0'+i)) + ":" + key
				if err := c.Do(ctx, c.B().Set().Key(k).Value("successor").Xx().Build()).Error(); err != nil {
					t.Fatalf("take %s: %v", k, err)
				}
			}
			select {
			case <-l.Lost():
				t.Fatal("the library noticed the takeover: the test no longer shows what the release reads")
			default:
			}
			err = l.Release(ctx)
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("release with keys %v taken: %v; want %v", tc.taken, err, tc.wantErr)
			}
			for _, i := range tc.taken {
				k := "rueidislock:" + string(rune('0'+i)) + ":" + key
				if v, err := c.Do(ctx, c.B().Get().Key(k).Build()).ToString(); err != nil || v != "successor" {
					t.Errorf("%s after the release: %q, %v; want the successor's value left alone", k, v, err)
				}
			}
		})
	}
}

// allKeys are the keys rueidislock sets for a lock on key: one with KeyMajority 1, three
// with its default 2.
func allKeys(name, key string) []string {
	if name == "rueidislock-readme" {
		return []string{"rueidislock:0:" + key}
	}
	return []string{"rueidislock:0:" + key, "rueidislock:1:" + key, "rueidislock:2:" + key}
}
