package driver

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"sync"
	"time"

	"github.com/redis/rueidis"
)

// forwarder is a loopback listener that hands every connection a driver opens to the run's
// own dialing (rueidis.ClientOption.DialCtxFn): the fault layer's proxies (latency,
// partition) and TLS then reach the driver's connections as they reach lockbench's. The
// driver speaks plain Redis protocol to it.
type forwarder struct {
	ln    net.Listener
	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// forward listens on 127.0.0.1 and dials addr through o's DialCtxFn for each connection.
func forward(o rueidis.ClientOption, addr string) (*forwarder, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &forwarder{ln: ln, conns: make(map[net.Conn]struct{})}
	var tc *tls.Config
	if o.TLSConfig != nil {
		tc = o.TLSConfig.Clone()
	}
	f.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed
			}
			f.wg.Go(func() { f.pipe(c, o, addr, tc) })
		}
	})
	return f, nil
}

func (f *forwarder) addr() string { return f.ln.Addr().String() }

func (f *forwarder) pipe(c net.Conn, o rueidis.ClientOption, addr string, tc *tls.Config) {
	d := o.Dialer // DialCtxFn may modify the dialer it is given
	ctx, cancel := context.WithTimeout(context.Background(), max(d.Timeout, 5*time.Second))
	up, err := o.DialCtxFn(ctx, addr, &d, tc)
	cancel()
	if err != nil {
		c.Close()
		return
	}
	if !f.track(c, up) {
		return
	}
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, c); done <- struct{}{} }()
	go func() { io.Copy(c, up); done <- struct{}{} }()
	<-done
	c.Close()
	up.Close()
	<-done
	f.untrack(c, up)
}

// track registers a pair of connections for close; false when the forwarder is closed.
func (f *forwarder) track(cs ...net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conns == nil {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		f.conns[c] = struct{}{}
	}
	return true
}

func (f *forwarder) untrack(cs ...net.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range cs {
		delete(f.conns, c)
	}
}

// close stops listening and ends every connection.
func (f *forwarder) close() {
	f.ln.Close()
	f.mu.Lock()
	for c := range f.conns {
		c.Close()
	}
	f.conns = nil
	f.mu.Unlock()
	f.wg.Wait()
}
