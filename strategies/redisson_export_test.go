package strategies

import "github.com/redis/rueidis"

// RedissonSleepers is how many of s's waiters sleep on the latch of the channel of key's
// lock under --wait native (redisson_wait.go), and how many subscribe to it: 0, 0 when s
// waits otherwise or nobody waits.
func RedissonSleepers(s Strategy, key string) (sleepers, subscribers int) {
	var ps *redissonPubSub
	var ch string
	switch x := s.(type) {
	case *redissonLock:
		ps, ch = x.ps, redissonLockChannel(key)
	case *multiLock:
		ps, ch = x.ps, redissonLockChannel(key)
	case *rwLock:
		ps, ch = x.ps, rwChannel(hashTagged(key))
	case *semaphore:
		ps, ch = x.ps, semaphoreChannel(hashTagged(key))
	case *expirableSemaphore:
		ps, ch = x.ps, semaphoreChannel(hashTagged(key))
	}
	if ps == nil {
		return 0, 0
	}
	ps.mu.Lock()
	e := ps.entries[ch]
	ps.mu.Unlock()
	if e == nil {
		return 0, 0
	}
	e.latchMu.Lock()
	defer e.latchMu.Unlock()
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return len(e.sleep), e.refs
}

func rueidisMessage(ch, msg string) rueidis.PubSubMessage {
	return rueidis.PubSubMessage{Channel: ch, Message: msg}
}
