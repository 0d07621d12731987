package zookeeper_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/services/zookeeper"
)

// silentPort accepts connections and never answers: a dead proxy, a hung server. accepted
// receives each connection as it is taken.
func silentPort(t *testing.T) (addr string, accepted <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{}, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String(), ch
}

// dial runs Dial in the background; the test waits for its answer under a generous bound
// (without the fix, go-zookeeper held Exists for over a minute: ten times two thirds of
// the 10 s session timeout).
func dial(ctx context.Context, addr string) <-chan error {
	out := make(chan error, 1)
	go func() {
		c, err := zookeeper.Dial(ctx, addr)
		if c != nil {
			c.Close()
		}
		out <- err
	}()
	return out
}

func wait(t *testing.T, ch <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(40 * time.Second):
		t.Fatalf("Dial(%s) still blocked after 40s; want it to give up at its context's end", what)
		return nil
	}
}

// Dial gives up at its context's deadline (--connect-timeout) on a port that accepts and
// never answers, and on a Redis, with one line that says so.
func TestDialGivesUpAtDeadline(t *testing.T) {
	silent, _ := silentPort(t)
	redistest.Require(t)
	redis := redistest.Start(t, 1)[0].Addr
	for _, addr := range []string{silent, redis} {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		err := wait(t, dial(ctx, addr), addr)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "does not answer within") || strings.Contains(err.Error(), "\n") {
			t.Errorf("Dial(%s) with a 500ms deadline: %v; want one line saying it does not answer within the bound", addr, err)
		}
	}
}

// Ctrl-C (the run's context cancelled) ends a Dial stuck on a silent port.
func TestDialHonoursCancel(t *testing.T) {
	silent, accepted := silentPort(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := dial(ctx, silent)
	select {
	case <-accepted:
	case <-time.After(30 * time.Second):
		t.Fatal("the client never connected to the silent port")
	}
	cancel()
	if err := wait(t, ch, silent); !errors.Is(err, context.Canceled) {
		t.Errorf("Dial cancelled: %v; want context.Canceled", err)
	}
}
