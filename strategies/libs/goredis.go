package libs

import (
	"context"
	"crypto/tls"
	"errors"
	"net"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/strategies"
)

// goRedisClient makes the go-redis client redsync and redislock drive from o, the rueidis
// options the run's client was made with, so that they reach the same server with the same
// credentials, TLS, database and — when the fault layer routes connections through its
// proxies (latency, partition) — the same dialing. mode is how rueidis found the server:
// a cluster gets a cluster client, a sentinel-mode option (o.Sentinel.MasterSet) a failover
// client that follows the sentinels' master, anything else a plain client. Everything the
// options do not say (pool size, timeouts, retries, RESP3) is go-redis's default: the
// libraries are measured with the client their users get.
func goRedisClient(o rueidis.ClientOption, mode rueidis.ClientMode) (redis.UniversalClient, error) {
	if len(o.InitAddress) == 0 {
		return nil, &strategies.OptionError{Field: "redis", Value: "", Reason: "the run's Redis address is unknown (Options.Connect has no InitAddress)"}
	}
	dial := dialer(o)
	protocol := 0 // go-redis's default, RESP3
	if o.AlwaysRESP2 {
		protocol = 2 // the embedded miniredis: what the run's own client speaks
	}
	switch {
	case o.Sentinel.MasterSet != "":
		return redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName:       o.Sentinel.MasterSet,
			SentinelAddrs:    o.InitAddress,
			SentinelUsername: o.Sentinel.Username,
			SentinelPassword: o.Sentinel.Password,
			Username:         o.Username,
			Password:         o.Password,
			DB:               o.SelectDB,
			TLSConfig:        o.TLSConfig,
			DialTimeout:      o.Dialer.Timeout,
			Dialer:           dial,
			Protocol:         protocol,
		}), nil
	case mode == rueidis.ClientModeCluster:
		return redis.NewClusterClient(&redis.ClusterOptions{
			Addrs:       o.InitAddress,
			Username:    o.Username,
			Password:    o.Password,
			TLSConfig:   o.TLSConfig,
			DialTimeout: o.Dialer.Timeout,
			Dialer:      dial,
			Protocol:    protocol,
		}), nil
	}
	return redis.NewClient(&redis.Options{
		Addr:        o.InitAddress[0],
		Username:    o.Username,
		Password:    o.Password,
		DB:          o.SelectDB,
		TLSConfig:   o.TLSConfig,
		DialTimeout: o.Dialer.Timeout,
		Dialer:      dial,
		Protocol:    protocol,
	}), nil
}

// dialer is go-redis's Dialer for o: nil (go-redis dials by itself, TLS included) unless o
// dials through DialCtxFn, which then dials every connection — TLS included, as rueidis
// hands it the TLS configuration — with o's net.Dialer.
func dialer(o rueidis.ClientOption) func(ctx context.Context, network, addr string) (net.Conn, error) {
	fn := o.DialCtxFn
	if fn == nil {
		return nil
	}
	nd := o.Dialer
	var tc *tls.Config
	if o.TLSConfig != nil {
		tc = o.TLSConfig.Clone()
	}
	return func(ctx context.Context, _, addr string) (net.Conn, error) {
		d := nd // DialCtxFn may modify the dialer it is given
		return fn(ctx, addr, &d, tc)
	}
}

// goRedisClients makes one go-redis client per rueidis option (redsync's masters).
func goRedisClients(opts []rueidis.ClientOption) ([]redis.UniversalClient, error) {
	out := make([]redis.UniversalClient, 0, len(opts))
	for _, o := range opts {
		c, err := goRedisClient(o, rueidis.ClientModeStandalone)
		if err != nil {
			closeAll(out)
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func closeAll(cs []redis.UniversalClient) error {
	var errs []error
	for _, c := range cs {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
