package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// Proxies are in-process TCP proxies (toxiproxy, used as a library, no HTTP API) between
// lockbench and each Redis server, so that a fault can delay or cut one server's traffic.
// They are created on the first connection to each server: Dial is the target's address
// rewrite (target.Spec.Dial), which also covers servers learned from a sentinel or a
// cluster's slot map.
type Proxies struct {
	srv *toxiproxy.ApiServer

	mu          sync.Mutex
	byServer    map[string]*toxiproxy.Proxy // upstream address -> the proxy lockbench dials
	listen      map[string]string           // upstream address -> its proxy's address, read once at start
	errs        map[string]error            // upstream address -> why its proxy failed
	replication map[string]*toxiproxy.Proxy // master address -> the proxy its replica uses
	closed      bool
}

// NewProxies returns an empty set of proxies.
func NewProxies() *Proxies {
	return &Proxies{
		srv:         toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop()),
		byServer:    map[string]*toxiproxy.Proxy{},
		listen:      map[string]string{},
		errs:        map[string]error{},
		replication: map[string]*toxiproxy.Proxy{},
	}
}

// Replication starts the proxy through which a replica (and the sentinels) reach master,
// and returns its address: target.Spec.ReplicationVia. The failover fault delays and cuts
// it.
func (p *Proxies) Replication(master string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if px, ok := p.replication[master]; ok {
		return px.Listen, nil
	}
	px := toxiproxy.NewProxy(p.srv, "replication-"+master, "127.0.0.1:0", master)
	if err := px.Start(); err != nil {
		return "", fmt.Errorf("replication proxy for %s: %w", master, err)
	}
	p.replication[master] = px
	return px.Listen, nil
}

func (p *Proxies) replicationOf(master string) (*toxiproxy.Proxy, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if px, ok := p.replication[master]; ok {
		return px, nil
	}
	return nil, fmt.Errorf("no replication proxy in front of %s", master)
}

// Dial returns the address to connect to instead of server: its proxy, started on first
// use. If the proxy cannot start, the server is reached directly and the error is kept for
// the fault that needs it.
func (p *Proxies) Dial(server string) string {
	if _, err := p.proxy(server); err != nil {
		return server
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.listen[server]
}

func (p *Proxies) proxy(server string) (*toxiproxy.Proxy, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if px, ok := p.byServer[server]; ok {
		return px, nil
	}
	if err, ok := p.errs[server]; ok {
		return nil, err
	}
	if p.closed {
		return nil, fmt.Errorf("proxies closed")
	}
	px := toxiproxy.NewProxy(p.srv, "redis-"+server, "127.0.0.1:0", server)
	if err := px.Start(); err != nil {
		err = fmt.Errorf("proxy for %s: %w", server, err)
		p.errs[server] = err
		return nil, err
	}
	p.byServer[server] = px
	p.listen[server] = px.Listen // toxiproxy rewrites Listen on every (re)start, under its own lock
	return px, nil
}

// lookup returns the proxy in front of server, which must already carry its traffic.
func (p *Proxies) lookup(server string) (*toxiproxy.Proxy, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if px, ok := p.byServer[server]; ok {
		return px, nil
	}
	if err, ok := p.errs[server]; ok {
		return nil, err
	}
	return nil, fmt.Errorf("no proxy carries the traffic of %s", server)
}

// addLatency makes the proxy delay every reply from the server by ms, ± jitter.
func addLatency(px *toxiproxy.Proxy, name string, latencyMS, jitterMS int64) error {
	body, _ := json.Marshal(map[string]any{
		"name": name, "type": "latency", "stream": "downstream", "toxicity": 1.0,
		"attributes": map[string]int64{"latency": latencyMS, "jitter": jitterMS},
	})
	_, err := px.Toxics.AddToxicJson(strings.NewReader(string(body)))
	return err
}

func removeToxic(px *toxiproxy.Proxy, name string) {
	_ = px.Toxics.RemoveToxic(context.Background(), name)
}

// cut stops the proxy: open connections are closed and new ones refused, as if the
// server's host dropped off the network.
func cut(px *toxiproxy.Proxy) { px.Stop() }

// heal starts the proxy again on the address it had.
func heal(px *toxiproxy.Proxy) error { return px.Start() }

// Close stops every proxy.
func (p *Proxies) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, px := range p.byServer {
		px.Stop()
	}
	for _, px := range p.replication {
		px.Stop()
	}
}

// Listeners returns the proxies' listen addresses, sorted, for tests and diagnostics.
func (p *Proxies) Listeners() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, addr := range p.listen {
		out = append(out, addr)
	}
	sort.Strings(out)
	return out
}
