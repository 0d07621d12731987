package faults

import (
	"context"
	"fmt"
	"slices"

	"github.com/lockbench/lockbench/strategies"
)

// kind is one fault: its syntax, what it needs of the target, and what it does. Each kind
// registers once, from its own file (holder_pause.go, kill.go, ...). Every behaviour is
// optional — a nil func is a part the fault takes no part in — and Parse, Set and Nodes
// call into the kinds of their specs instead of switching on a Kind.
//
// The client-side funcs run in the workers, concurrently, for every worker and every lock
// cycle; they reach their spec, its counter and the phase through f (see fault). The node
// side runs once per phase, in Set.Run.
type kind struct {
	name Kind
	// order places the kind in Forms, Help and the unknown-fault error, lowest first: the
	// catalog goes from the holder's faults out to the servers', then the clients'. Orders
	// are unique; they leave gaps so that a new kind can go between two others.
	order int

	// The syntax, name:required,...[,optional...], and what the fault does, for Forms and
	// Help. The summary's further lines are aligned under its first.
	required, optional []field
	summary            string

	// hooks are the strategy hooks the fault sets. Several faults' hooks run in the order of
	// their specs (see Set.Hooks).
	hooks func(f *fault) strategies.Hooks
	// worker returns the context a worker runs under (Set.WorkerContext).
	worker func(ctx context.Context, f *fault, worker int) context.Context
	// stall runs in the critical section after the hold (Set.Stall), and stallWrite between
	// the lease check and the last write (Set.StallWrite); each blocks as long as the fault
	// stalls owner.
	stall, stallWrite func(ctx context.Context, f *fault, owner string)
	// crash runs in the critical section after the stalls (Set.Crash) and reports whether
	// owner dies there.
	crash func(f *fault, owner string) bool
	// begin is the event line when the measured window starts (t=0); "" reports nothing.
	begin func(f *fault) string
	// end says how often a random fault struck: n times. Run reports it as the strikes
	// happen, stamped at the first of each batch (see Set.Run).
	end func(f *fault, n uint64) string

	// play is the node fault's action: it acts on a server at its time, reports through
	// sc.say and undoes what it did when ctx ends. A kind with play needs nodes
	// (Spec.NeedsNodes); if it has a node field, Nodes.check has made sure the target has
	// that node.
	play func(ctx context.Context, sc *scene)
	// proxy says the fault works through the proxy in front of its node (Spec.NeedsProxy),
	// which Nodes.check requires.
	proxy bool
	// check says what else the fault needs of the target; its error is the reason of the
	// *SpecError New returns.
	check func(sp Spec, n *Nodes) error
}

// registry holds the kinds. Only init functions write it, and they all run before any
// reader: it needs no lock.
var registry struct {
	byName map[Kind]*kind
	order  []*kind // by kind.order: the catalog order
}

// register adds a fault kind. A kind without a name or summary, a name or order already
// taken, two fields of one name, a default that does not parse, or a node-side part without
// play is a programming error and panics at init time.
func register(k kind) {
	switch {
	case k.name == "":
		panic("faults: register with an empty name")
	case registry.byName[k.name] != nil:
		panic("faults: duplicate registration of " + string(k.name))
	case k.summary == "":
		panic("faults: " + string(k.name) + " has no summary")
	case (k.proxy || k.check != nil) && k.play == nil:
		panic("faults: " + string(k.name) + " checks the target but plays nothing on it")
	}
	for _, o := range registry.order {
		if o.order == k.order {
			panic(fmt.Sprintf("faults: %s and %s share the order %d", o.name, k.name, k.order))
		}
	}
	names := map[string]bool{}
	for _, f := range slices.Concat(k.required, k.optional) {
		if names[f.name] {
			panic(fmt.Sprintf("faults: %s has two fields %q", k.name, f.name))
		}
		names[f.name] = true
	}
	for _, f := range k.optional {
		if f.def != "" {
			if err := f.parse(&Spec{}, f.def); err != nil {
				panic(fmt.Sprintf("faults: %s: the default %s=%q does not parse: %v", k.name, f.name, f.def, err))
			}
		}
	}
	if registry.byName == nil {
		registry.byName = make(map[Kind]*kind)
	}
	registry.byName[k.name] = &k
	i, _ := slices.BinarySearchFunc(registry.order, k.order, func(o *kind, order int) int { return o.order - order })
	registry.order = slices.Insert(registry.order, i, &k)
}

// lookup returns the registered kind of that name, or nil.
func lookup(name Kind) *kind { return registry.byName[name] }

// kinds returns every registered kind in catalog order.
func kinds() []*kind { return registry.order }

// field returns the kind's field of that name.
func (k *kind) field(name string) (field, bool) {
	for _, f := range slices.Concat(k.required, k.optional) {
		if f.name == name {
			return f, true
		}
	}
	return field{}, false
}
