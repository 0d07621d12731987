package workload

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/internal/redistest"
)

// The phase's end stops an acquire waiting at the command gate before its first command,
// and nothing else: a later command of an acquire (setnx-expire's EXPIRE) and a release
// wait for their slot and are sent, so that the end cuts no acquire in half and leaves no
// lock behind.
func TestCmdGateEndStopsOnlyAnAcquiresFirstCommand(t *testing.T) {
	t.Parallel()
	_, c := redistest.Server(t)
	end := make(chan struct{})
	g := &cmdGate{slots: make(chan struct{}, 1), end: end}
	gc := g.wrap(c)
	g.slots <- struct{}{} // every slot taken: whoever comes waits

	do := func(ctx context.Context, key string) <-chan error {
		errc := make(chan error, 1)
		go func() { errc <- gc.Do(ctx, c.B().Set().Key(key).Value("v").Build()).Error() }()
		return errc
	}
	first := do(context.WithValue(context.Background(), gateKey{}, &acquireSent{}), "gate:first")
	sent := &acquireSent{}
	sent.sent.Store(true)
	later := do(context.WithValue(context.Background(), gateKey{}, sent), "gate:later")
	release := do(context.Background(), "gate:release")

	close(end)
	select {
	case err := <-first:
		if !errors.Is(err, errPhaseEnded) {
			t.Fatalf("the acquire's first command waiting at the gate ended with %v, want errPhaseEnded", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the acquire's first command still waits at the gate after the phase's end")
	}
	<-g.slots // the slot frees: the other two go, one after the other
	for name, errc := range map[string]<-chan error{"a later command of an acquire": later, "a release": release} {
		select {
		case err := <-errc:
			if err != nil {
				t.Errorf("%s behind the gate: %v, want it sent", name, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s still waits at the gate with a slot free", name)
		}
	}
	for _, key := range []string{"gate:first", "gate:later", "gate:release"} {
		n, err := c.Do(context.Background(), c.B().Exists().Key(key).Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(1); key == "gate:first" {
			want = 0
			if n != want {
				t.Errorf("%s: the command stopped at the gate reached Redis", key)
			}
		} else if n != want {
			t.Errorf("%s: the command let through the gate never reached Redis", key)
		}
	}
	if len(g.slots) != 0 {
		t.Errorf("%d slots still taken after every command returned", len(g.slots))
	}
}

// A fleet no larger than the client's ring has no gate; a larger one has one slot per ring
// place, and its workers' acquires carry what the gate reads.
func TestCmdGateOnlyForFleetsBeyondTheRing(t *testing.T) {
	t.Parallel()
	_, c := redistest.Server(t)
	if g := newCmdGate(c, ringSlots); g != nil {
		t.Errorf("a gate for %d workers, which the ring holds", ringSlots)
	}
	g := newCmdGate(c, ringSlots+1)
	if g == nil || cap(g.slots) != ringSlots {
		t.Fatalf("gate %+v for %d workers, want %d slots", g, ringSlots+1, ringSlots)
	}
	var _ rueidis.Client = g.wrap(c)
	p := &phase{gate: g, ph: Phase{Base: Base{Load: Load{LockSet: 1}}}, cfg: &Config{}, state: make([]keyState, 1)}
	w := p.newWorker(context.Background(), context.Background(), 1)
	if a, _ := w.actx.start(time.Now(), time.Second).Value(gateKey{}).(*acquireSent); a != &w.sent {
		t.Error("the worker's acquire context does not carry its acquireSent")
	}
	w.actx.stop()
}
