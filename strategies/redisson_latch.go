package strategies

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/redis/rueidis"
)

// Redisson's unlock latch (since 3.24; redisson-4.7.0, RedissonBaseLock.java lines 212-247):
// every unlock script of the lock family (RLock, spin, fair, read, write) first GETs
// redisson_unlock_latch:{name}:<requestId> and returns the value it holds, so that an unlock
// the client retries after a lost reply answers as the first run did; the script SETs it to
// its result (0 holds remain, 1 released) with a PX of the client's whole retry budget, and the
// client DELs it once the reply is in, without waiting for the DEL.

// unlockLatchKey is a fresh latch for one unlock of the lock stored under lockKey (already
// hash-tagged): prefixName("redisson_unlock_latch", rawName) + ":" + generateId(), the id
// 16 random bytes in hex (ServiceManager.generateId).
func unlockLatchKey(lockKey string) string {
	var id [16]byte
	_, _ = crand.Read(id[:]) // never fails on Linux
	return "redisson_unlock_latch:" + lockKey + ":" + hex.EncodeToString(id[:])
}

// Redisson's default retry settings (BaseConfig.java, redisson-4.7.0): timeout 3000 ms,
// retryAttempts 4, retryDelay EqualJitterDelay(1s, 2s).
const (
	redissonTimeoutMS     = 3000
	redissonRetryAttempts = 4
)

// unlockLatchLife is the latch's PX for one unlock, as RedissonBaseLock.unlockInnerAsync
// computes it: (timeout + retryDelay.calcDelay(retryAttempts)) * retryAttempts. With the
// defaults calcDelay(4) is EqualJitterDelay's 2000 ms cap, halved, plus a random 0..1000 ms:
// the latch lives 16 to 20 s.
func unlockLatchLife() string {
	delay := 1000 + rand.Int64N(1001)
	return strconv.FormatInt((redissonTimeoutMS+delay)*redissonRetryAttempts, 10)
}

// latchSweeper DELs unlock latches in the background, as Redisson's unlock does not wait for
// its DEL. One goroutine sends the latches queued since its last batch as one pipeline of
// DELs (one DEL a latch, as Redisson sends) while any are queued; wait returns once every
// DEL queued has been answered (Close). A goroutine for each DEL cost redisson-lock's
// releases a goroutine's start, a stack grown to 4 KiB and a timer each: about 550 of them
// alive at once in TestCyclingWorkersKeepTheirStacks's 3,000 workers.
type latchSweeper struct {
	mu      sync.Mutex
	queued  []string
	running bool // a sweep goroutine runs; it ends when it finds nothing queued
	wg      sync.WaitGroup
}

func (s *latchSweeper) del(c rueidis.Client, latch string) {
	s.mu.Lock()
	s.queued = append(s.queued, latch)
	start := !s.running
	s.running = true
	if start {
		s.wg.Add(1)
	}
	s.mu.Unlock()
	if start {
		go s.sweep(c)
	}
}

func (s *latchSweeper) sweep(c rueidis.Client) {
	defer s.wg.Done()
	var batch []string
	cmds := make(rueidis.Commands, 0, 64)
	for {
		s.mu.Lock()
		batch, s.queued = s.queued, batch[:0]
		if len(batch) == 0 {
			s.running = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		cmds = cmds[:0]
		for _, latch := range batch {
			cmds = append(cmds, c.B().Del().Key(latch).Build())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = c.DoMulti(ctx, cmds...)
		cancel()
	}
}

func (s *latchSweeper) wait() { s.wg.Wait() }
