package workload

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/strategies"
)

// named is a Backend that only has a name: routing never calls anything else.
type named struct {
	Backend
	name string
}

func (n named) Name() string { return n.name }

func TestRouterRoutesByTheStrategysService(t *testing.T) {
	redis, other := named{name: "Redis"}, named{name: "other"}
	s := Router{Default: redis, By: map[string]Backend{"etcd": other}}
	for _, tc := range []struct {
		service string
		want    string
	}{{"", "Redis"}, {"etcd", "other"}} {
		got, err := s.For(strategies.Info{Name: "x", Service: tc.service})
		if err != nil || got.Name() != tc.want {
			t.Errorf("service %q: got %v, %v; want %s", tc.service, got, err, tc.want)
		}
	}
	_, err := s.For(strategies.Info{Name: "zk-lock", Service: "zookeeper"})
	if err == nil || !strings.Contains(err.Error(), "zk-lock runs on zookeeper") || !strings.Contains(err.Error(), "it has: etcd") {
		t.Errorf("a service the run has not: %v", err)
	}
	if _, err := (Router{By: map[string]Backend{"etcd": other}}).For(strategies.Info{Name: "token"}); err == nil || !strings.Contains(err.Error(), "runs on Redis") {
		t.Errorf("a Redis strategy in a run without Redis: %v", err)
	}
	if got := (Router{By: map[string]Backend{"etcd": other}}).Name(); got != "other" {
		t.Errorf("barrier service without Redis: %q, want the first other service", got)
	}
}
