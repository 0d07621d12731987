package workload

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/redis/rueidis"
)

// cmdGate bounds the commands a large fleet has queued in its Redis client at once, so that
// the phase's end can stop the acquires still waiting to send their first command (issue
// 32, item 6).
//
// lockbench's client pipelines every worker's commands over one connection per server
// (services/redis/server.ClientOption), through rueidis's ring of 1024 slots per
// connection. A worker whose command finds the ring full waits for a slot there, and once it
// has drawn a slot it cannot leave: the ring sends the command whatever its context says.
// With 100,000 workers on 10,000 keys, 97 % of the workers sat there when measured. That
// made the phase's end wait for each of them to send its SET NX and get its answer (more
// than the drain's 3 s grace), and their stacks doubled to 8 KiB as they grew by the ring's
// wait, the deepest of a cycle: 800 MiB of stacks for the fleet.
//
// The gate lets no more commands into the client than its slots (the ring's size per
// connection), and those beyond wait here, where the wait is shallow and may end: an
// acquire that has sent nothing yet stops waiting when the phase stops taking cycles, as
// if it had not begun (nothing is held, nothing is cut in half), or when its own time is up.
// A command after the acquire's first one (setnx-expire's EXPIRE, a retry), a release or a
// renewal waits for its slot as it would have waited in the ring: the end never cuts them.
// The commands get to Redis in the same number and at the same rate either way.
//
// Phases of no more workers than the slots have no gate: their commands never fill the ring.
type cmdGate struct {
	slots chan struct{}
	end   <-chan struct{} // the phase stops taking cycles; set before the workers start
}

// ringSlots is rueidis's ring size per connection (its RingScaleEachConn default, 10).
const ringSlots = 1 << 10

// errPhaseEnded is a command's end at the gate when the phase stopped taking cycles before
// the command was sent.
var errPhaseEnded = errors.New("the phase ended before the command was sent")

// gateKey is the context key of the worker a command comes from (its acquire's progress).
type gateKey struct{}

// acquireSent is what the gate knows of a worker's acquire: whether it has sent a command.
type acquireSent struct{ sent atomic.Bool }

// newCmdGate is the gate of a phase of workers on c, or nil when they cannot fill its ring.
func newCmdGate(c rueidis.Client, workers int) *cmdGate {
	n := ringSlots * max(len(c.Nodes()), 1)
	if workers <= n {
		return nil
	}
	return &cmdGate{slots: make(chan struct{}, n)}
}

// wrap is c behind the gate.
func (g *cmdGate) wrap(c rueidis.Client) rueidis.Client { return &gatedClient{Client: c, g: g} }

// enter takes a slot for a command under ctx; an error when the command is not to be sent.
//
//go:noinline
func (g *cmdGate) enter(ctx context.Context) error {
	a, _ := ctx.Value(gateKey{}).(*acquireSent)
	select {
	case g.slots <- struct{}{}:
		if a != nil {
			a.sent.Store(true)
		}
		return nil
	default:
	}
	if a == nil || a.sent.Load() {
		g.slots <- struct{}{} // not the first of an acquire: it goes, as through the ring
		return nil
	}
	select {
	case g.slots <- struct{}{}:
		a.sent.Store(true)
		return nil
	case <-g.end:
		return errPhaseEnded
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *cmdGate) leave() { <-g.slots }

// gatedClient is a rueidis client whose Do and DoMulti pass the gate; the rest (the
// subscriptions' dedicated connections, the node list) are the client's.
type gatedClient struct {
	rueidis.Client
	g *cmdGate
}

// Do adds the least it can to the stack under the command's wait (see parkFrame): the
// gate's own wait is in enter, and the fast path is a channel send.
func (c *gatedClient) Do(ctx context.Context, cmd rueidis.Completed) (r rueidis.RedisResult) {
	if err := c.g.enter(ctx); err != nil {
		return rueidis.NewErrorResult(err)
	}
	r = c.Client.Do(ctx, cmd)
	c.g.leave()
	return r
}

func (c *gatedClient) DoMulti(ctx context.Context, cmds ...rueidis.Completed) (rs []rueidis.RedisResult) {
	if err := c.g.enter(ctx); err != nil {
		rs = make([]rueidis.RedisResult, len(cmds))
		for i := range rs {
			rs[i] = rueidis.NewErrorResult(err)
		}
		return rs
	}
	rs = c.Client.DoMulti(ctx, cmds...)
	c.g.leave()
	return rs
}
