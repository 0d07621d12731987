package strategies

// announce completes the keys and arguments of one of Redisson's release scripts built with
// scriptWithTurn: Redisson's channel ch goes last in keys; with the pubsub wait policy the
// lock's list of waiting processes goes there instead, and this process's turn arguments
// after args.
func (b *base) announce(keys, args []string, name, ch string) ([]string, []string) {
	if b.notify == nil {
		return append(keys, ch), args
	}
	tc := b.channel(name)
	return append(keys, waitList(name)), append(args, b.turnArgs(tc, b.notify.hasWaiters(tc))...)
}

// announced acts on what announce returned in a release script (0: nothing was announced):
// on this process's turn its next waiter for name is woken.
func (b *base) announced(name string, r int64) error {
	if r == 0 || b.notify == nil {
		return nil
	}
	return b.turned(name, r)
}
