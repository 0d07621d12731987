package strategies

import (
	"fmt"
	"strings"
	"sync"
)

// Constructor builds a Strategy from options already filled and validated for its Info.
type Constructor func(info Info, o *resolved) (Strategy, error)

type entry struct {
	info     Info
	ctor     Constructor
	external bool // registered with Register, from outside the lock core
}

// Register adds a strategy built outside this package to the catalog: a library adapter,
// or a lock service other than Redis (Info.Service). build gets the options with their
// defaults applied and the service-independent ones checked (ttl, watchdog against
// Info.AutoRenew, wait); it checks the connection it needs (Options.Client, Connect or
// Service) itself. Call it from an init function; a duplicate or empty name panics.
func Register(info Info, build func(info Info, o Options) (Strategy, error)) {
	register(info, func(info Info, o *resolved) (Strategy, error) { return build(info, o.Options) })
	registry.Lock()
	defer registry.Unlock()
	e := registry.byName[info.Name]
	e.external = true
	registry.byName[info.Name] = e
}

var registry struct {
	sync.RWMutex
	byName map[string]entry
	order  []string // registration order: the catalog order
}

// register adds a strategy to the catalog. A duplicate or empty name is a programming error
// and panics at init time.
func register(info Info, ctor Constructor) {
	registry.Lock()
	defer registry.Unlock()
	if info.Name == "" {
		panic("strategies: register with an empty name")
	}
	if _, dup := registry.byName[info.Name]; dup {
		panic("strategies: duplicate registration of " + info.Name)
	}
	if registry.byName == nil {
		registry.byName = make(map[string]entry)
	}
	registry.byName[info.Name] = entry{info: info, ctor: ctor}
	registry.order = append(registry.order, info.Name)
}

// Names returns the registered strategy names in catalog order.
func Names() []string {
	registry.RLock()
	defer registry.RUnlock()
	return append([]string(nil), registry.order...)
}

// Core returns the names of the lock core's own strategies (this package's, the seed
// articles' locks) in catalog order: what `--strategy all` runs. Library adapters and
// other lock services, registered with Register, are not among them.
func Core() []string {
	registry.RLock()
	defer registry.RUnlock()
	var out []string
	for _, n := range registry.order {
		if !registry.byName[n].external {
			out = append(out, n)
		}
	}
	return out
}

// Catalog returns every registered strategy's Info in catalog order.
func Catalog() []Info {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]Info, 0, len(registry.order))
	for _, n := range registry.order {
		out = append(out, registry.byName[n].info)
	}
	return out
}

// Lookup returns the Info of a registered strategy.
func Lookup(name string) (Info, bool) {
	registry.RLock()
	defer registry.RUnlock()
	e, ok := registry.byName[name]
	return e.info, ok
}

// New builds the named strategy. An unknown name or an unusable option is an *OptionError.
func New(name string, o Options) (Strategy, error) {
	registry.RLock()
	e, ok := registry.byName[name]
	registry.RUnlock()
	if !ok {
		return nil, unknownStrategy(name)
	}
	r, err := resolve(e.info, o)
	if err != nil {
		return nil, err
	}
	s, err := e.ctor(e.info, r)
	if err != nil {
		return nil, fmt.Errorf("strategy %s: %w", name, err)
	}
	return s, nil
}

func unknownStrategy(name string) error {
	return &OptionError{Field: "strategy", Value: name, Reason: "unknown strategy; valid: " + strings.Join(Names(), ", ")}
}

// renewable lists the strategies that accept a watchdog.
func renewable() []string {
	var out []string
	for _, i := range Catalog() {
		if i.AutoRenew {
			out = append(out, i.Name)
		}
	}
	return out
}
