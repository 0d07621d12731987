package strategies

import (
	"fmt"
	"sort"
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
	byName   map[string]entry
	order    []string // registration order: the catalog order
	families map[string]family
	loaded   map[string]entry // family variants already loaded, by full name
}

// A Family is a strategy whose name carries an argument, PREFIX:ARG: a lock the user
// brings (lua:DIR, a directory of Lua scripts; driver:CMD, a process speaking the driver
// protocol). Its variants are not in Names or Catalog: they exist once a name asks for one.
type Family struct {
	// Prefix is the name's part before the colon: "lua", "driver".
	Prefix string
	// Usage shows the name's form in help and errors: "lua:DIR".
	Usage string
	// Load reads and checks the variant arg names (its files, its command) and returns its
	// Info, whose Name is the full name "PREFIX:ARG". A variant it cannot use is an error
	// that names what is wrong in one line (an *OptionError with Field "strategy" reads
	// best). Load runs once per name and process; its Info is kept.
	Load func(arg string) (Info, error)
	// Build makes a strategy of a loaded variant, as Register's build does.
	Build func(info Info, o Options) (Strategy, error)
}

// RegisterFamily adds a family of strategies named PREFIX:ARG. Call it from an init
// function; a duplicate or empty prefix panics.
func RegisterFamily(f Family) {
	registerFamily(f.Prefix, f.Usage, f.Load, func(info Info, o *resolved) (Strategy, error) { return f.Build(info, o.Options) }, true)
}

// registerFamily is RegisterFamily for the lock core's own families, whose constructors
// get the resolved options.
func registerFamily(prefix, usage string, load func(string) (Info, error), ctor Constructor, external bool) {
	registry.Lock()
	defer registry.Unlock()
	if prefix == "" || strings.ContainsAny(prefix, ":, ") {
		panic("strategies: register a family with an empty or malformed prefix")
	}
	if _, dup := registry.families[prefix]; dup {
		panic("strategies: duplicate family " + prefix)
	}
	if registry.families == nil {
		registry.families = make(map[string]family)
		registry.loaded = make(map[string]entry)
	}
	registry.families[prefix] = family{usage: usage, load: load, ctor: ctor, external: external}
}

type family struct {
	usage    string
	load     func(arg string) (Info, error)
	ctor     Constructor
	external bool
}

// Families returns the usage of every registered family ("lua:DIR", ...), sorted.
func Families() []string {
	registry.RLock()
	defer registry.RUnlock()
	var out []string
	for _, f := range registry.families {
		out = append(out, f.usage)
	}
	sort.Strings(out)
	return out
}

// lookup finds a registered strategy or loads a family's variant. An unknown name or a
// variant its family cannot load is an error.
func lookup(name string) (entry, error) {
	registry.RLock()
	e, ok := registry.byName[name]
	if !ok {
		e, ok = registry.loaded[name]
	}
	registry.RUnlock()
	if ok {
		return e, nil
	}
	prefix, arg, isFamily := strings.Cut(name, ":")
	registry.RLock()
	f, known := registry.families[prefix]
	registry.RUnlock()
	if !isFamily || !known {
		return entry{}, unknownStrategy(name)
	}
	if arg == "" {
		return entry{}, &OptionError{Field: "strategy", Value: name, Reason: "needs its argument: " + f.usage}
	}
	info, err := f.load(arg)
	if err != nil {
		return entry{}, err
	}
	info.Name = name
	e = entry{info: info, ctor: f.ctor, external: f.external}
	registry.Lock()
	if prev, ok := registry.loaded[name]; ok {
		e = prev // another goroutine loaded it first
	} else {
		registry.loaded[name] = e
	}
	registry.Unlock()
	return e, nil
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

// CatalogOf is the catalog of the strategies named (Resolve: a family's variants such as
// lua:DIR too), in the order given; with no names, the whole Catalog.
func CatalogOf(names []string) ([]Info, error) {
	if len(names) == 0 {
		return Catalog(), nil
	}
	out := make([]Info, 0, len(names))
	for _, n := range names {
		i, err := Resolve(n)
		if err != nil {
			return nil, err
		}
		out = append(out, i)
	}
	return out, nil
}

// Lookup returns the Info of a registered strategy or of a family's variant (loading it
// the first time); false when Resolve would return an error.
func Lookup(name string) (Info, bool) {
	e, err := lookup(name)
	return e.info, err == nil
}

// Resolve returns the Info of a registered strategy or of a family's variant, or the error
// that says why the name cannot be run: unknown, or a variant its family cannot load.
func Resolve(name string) (Info, error) {
	e, err := lookup(name)
	return e.info, err
}

// New builds the named strategy. An unknown name or an unusable option is an *OptionError.
func New(name string, o Options) (Strategy, error) {
	e, err := lookup(name)
	if err != nil {
		return nil, err
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
	valid := strings.Join(append(Names(), Families()...), ", ")
	return &OptionError{Field: "strategy", Value: name, Reason: "unknown strategy; valid: " + valid}
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
