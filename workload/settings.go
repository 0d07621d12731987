package workload

import (
	"fmt"
	"strconv"
	"time"

	"github.com/lockbench/lockbench/strategies"
)

// PhaseSetting is one setting a phase may carry its own value of. The flag of that name
// (its value copied into each phase by Config.Phase), a profile phase's key and a sweep's
// --param all set it through Set, so the three accept the same names and values and mean
// the same by them; a test holds the flags to it.
type PhaseSetting struct {
	Name string
	// Sweep tells whether `lockbench sweep --param` may vary it.
	Sweep bool
	// Set parses v as the flag of that name does and sets it on ph. The error says what a
	// valid value is, without the setting's name (the caller names the field as its
	// input spelled it: --workers, a profile's line, --param workers=0).
	Set func(ph *Phase, v string) error
}

// PhaseSettings are the settings a phase may override, in the order help and errors list
// them.
var PhaseSettings = []PhaseSetting{
	{"ttl", true, func(ph *Phase, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("want a duration > 0, e.g. 500ms (0 = no ttl, for setnx-expire)")
		}
		ph.TTL = d
		if d == 0 {
			ph.TTL = strategies.NoTTL
		}
		return nil
	}},
	{"watchdog", true, func(ph *Phase, v string) (err error) {
		ph.Watchdog, err = strategies.ParseWatchdog(v)
		return err
	}},
	{"wait", true, func(ph *Phase, v string) (err error) {
		ph.Wait, err = strategies.ParseWait(v)
		return err
	}},
	{"workers", true, func(ph *Phase, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("want a whole number, at least 1")
		}
		// --max-inflight defaults to --workers: a phase's own workers move it along, unless
		// it was set to something else.
		if ph.MaxInflight == ph.Workers {
			ph.MaxInflight = n
		}
		ph.Workers = n
		return nil
	}},
	{"keys", true, func(ph *Phase, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("want a whole number, at least 1")
		}
		ph.Keys = n
		return nil
	}},
	{"hold", true, func(ph *Phase, v string) error { return ph.Hold.Set(v) }},
	{"rate", true, func(ph *Phase, v string) error {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r < 0 {
			return fmt.Errorf("want acquisitions per second >= 0 (0 = closed loop)")
		}
		ph.Rate = r
		return nil
	}},
	{"read-ratio", true, func(ph *Phase, v string) error {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || !(r >= 0 && r <= 1) {
			return fmt.Errorf("want a fraction from 0 to 1 (0.9 = 9 acquires in 10 are reads)")
		}
		ph.ReadRatio = r
		return nil
	}},
	{"permits", true, func(ph *Phase, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("want a whole number, at least 1")
		}
		ph.Permits = n
		return nil
	}},
	{"lock-set", true, func(ph *Phase, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("want a whole number, at least 1")
		}
		ph.LockSet = n
		return nil
	}},
}

// LookupPhaseSetting returns the phase setting named name.
func LookupPhaseSetting(name string) (PhaseSetting, bool) {
	for _, s := range PhaseSettings {
		if s.Name == name {
			return s, true
		}
	}
	return PhaseSetting{}, false
}

// sweepParams are the names of the settings a sweep may vary.
func sweepParams() []string {
	var out []string
	for _, s := range PhaseSettings {
		if s.Sweep {
			out = append(out, s.Name)
		}
	}
	return out
}
