package strategies

import (
	"context"
	"testing"
	"time"
)

// TestRedissonLatch: the latch of a Redisson channel (RedissonLockEntry's Semaphore(0)): a
// permit wakes the longest sleeper, or waits for the next one to sleep; waking the sleepers
// wakes only those that sleep now.
func TestRedissonLatch(t *testing.T) {
	e := &redissonEntry{}
	woke := make(chan int, 3)
	sleepers := func() int {
		e.latchMu.Lock()
		defer e.latchMu.Unlock()
		return len(e.sleep)
	}
	for i := range 3 {
		go func() {
			e.await(context.Background(), time.Hour)
			woke <- i
		}()
		deadline := time.Now().Add(30 * time.Second)
		for sleepers() != i+1 {
			if time.Now().After(deadline) {
				t.Fatalf("sleeper %d never slept", i)
			}
			time.Sleep(time.Millisecond)
		}
	}
	e.release(1) // UNLOCK_MESSAGE: one sleeper, the first
	if got := <-woke; got != 0 {
		t.Fatalf("an unlock message woke sleeper %d, want the longest sleeping, 0", got)
	}
	if n := sleepers(); n != 2 {
		t.Fatalf("after one unlock message %d sleep, want 2", n)
	}
	e.releaseSleepers() // READ_UNLOCK_MESSAGE: every sleeper
	<-woke
	<-woke
	if n := sleepers(); n != 0 || e.permits != 0 {
		t.Fatalf("after waking every sleeper: %d sleep, %d permits; want none, none", n, e.permits)
	}
	e.releaseSleepers() // nobody sleeps: nothing kept
	e.release(1)        // nobody sleeps: a permit for the next
	done := make(chan struct{})
	go func() { e.await(context.Background(), time.Hour); close(done) }()
	<-done // took the permit without sleeping
	if e.permits != 0 {
		t.Fatalf("%d permits left, want 0", e.permits)
	}
}

// TestSemaphoreMessageWakes: SemaphorePubSub wakes min(subscribers, free permits).
func TestSemaphoreMessageWakes(t *testing.T) {
	p := &redissonPubSub{kind: semaphoreMessages, entries: map[string]*redissonEntry{}}
	e := &redissonEntry{ch: "c", refs: 2}
	p.entries["c"] = e
	p.onMessage(rueidisMessage("c", "5"))
	if e.permits != 2 {
		t.Fatalf("a release announcing 5 free permits to 2 subscribers left %d permits, want 2", e.permits)
	}
}
