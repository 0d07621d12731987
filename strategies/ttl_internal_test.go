package strategies

import (
	"testing"
	"time"
)

// TestTTLValue: the ttl's three states are values of their own: nobody's choice (the zero
// value, the default lease), none (--ttl 0) and a chosen lease; none is no sentinel duration.
func TestTTLValue(t *testing.T) {
	var def TTL
	if def.Chosen() || def.None() || def.Duration() != DefaultTTL || def.Milliseconds() != DefaultTTL.Milliseconds() || def.String() != "10s" {
		t.Errorf("zero value: chosen %v, none %v, %s, %d ms; want nobody's choice, the default 10s", def.Chosen(), def.None(), def.Duration(), def.Milliseconds())
	}
	var none TTL
	if err := none.Set("0"); err != nil || none != NoTTL || !none.Chosen() || none.Duration() != 0 || none.Milliseconds() != 0 || none.String() != "0s" {
		t.Errorf("--ttl 0: %+v (%v), want NoTTL: chosen, no duration, printed 0s", none, err)
	}
	var chosen TTL
	if err := chosen.Set("10s"); err != nil || !chosen.Chosen() || chosen.Duration() != DefaultTTL || chosen == def {
		t.Errorf("--ttl 10s: %+v (%v), want chosen though it equals the default", chosen, err)
	}
	if err := chosen.Set("x"); err == nil {
		t.Error("--ttl x: accepted")
	}
}

// TestSettledOnce: Settle makes the lease's milliseconds and script argument once; settled
// Params settle again to themselves, and building takes them as they are, unless they
// changed since, when they are settled anew (a stale lease is never built with).
func TestSettledOnce(t *testing.T) {
	p, err := Settle("token", Params{TTL: TTLOf(2500 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	if s := p.settled; s == nil || s.ttl != 2500*time.Millisecond || s.ttlMS != 2500 || s.ttlArg != "2500" {
		t.Fatalf("settled: %+v", p.settled)
	}
	again, err := Settle("token", p)
	if err != nil || again.settled != p.settled {
		t.Errorf("settled Params settled again: %p, want %p (%v)", again.settled, p.settled, err)
	}
	info, _ := Lookup("token")
	info.Service = "test" // no connection to check: the Params are what this test is about
	r, err := resolve(info, Options{Params: p})
	if err != nil || r.ttlArg != "2500" {
		t.Fatalf("built with %q (%v), want the settled 2500", r.ttlArg, err)
	}
	p.TTL = TTLOf(3 * time.Second) // changed after Settle
	r, err = resolve(info, Options{Params: p})
	if err != nil || r.ttlArg != "3000" || r.ttl != 3*time.Second {
		t.Errorf("changed ttl built with %q (%v), want 3000", r.ttlArg, err)
	}
	if _, err := Settle("fenced", again); err != nil || !again.isSettled("token") || again.isSettled("fenced") {
		t.Errorf("Params settled for token taken as settled for fenced (%v)", err)
	}
	if _, err := Settle("token", Params{TTL: NoTTL}); err == nil {
		t.Error("token without a ttl: settled, want refused")
	}
}
