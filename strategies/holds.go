package strategies

import "sync"

// holdCounter counts the leases each owner holds per lock in this process (by the lock's
// name), for a reentrant strategy's waits: a holder's nested acquire must try at once,
// never queue behind the local waiters for the lock it holds. They wait for its own
// release, so queued behind them it would sleep until its lease lapsed and let one of them
// in beside it.
type holdCounter struct {
	mu sync.Mutex
	n  map[holdKey]int
}

func newHoldCounter() *holdCounter { return &holdCounter{n: make(map[holdKey]int)} }

func (h *holdCounter) add(name, owner string, d int) {
	k := holdKey{name, owner}
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := h.n[k] + d; n > 0 {
		h.n[k] = n
	} else {
		delete(h.n, k)
	}
}

// holding reports whether owner holds a lease of key's lock in this process (false for a
// strategy that is not reentrant).
func (b *base) holding(key, owner string) bool {
	h := b.holds
	if h == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n[holdKey{key, owner}] > 0
}
