package main

import (
	"cmp"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/lockbench/lockbench/profiles"
	"github.com/lockbench/lockbench/workload"
)

// Every phase setting is a run flag, a profile phase's key and (when it can be swept) a sweep
// parameter, and a value means the same through each: the phase it yields is identical.
func TestPhaseSettingsMeanTheSameEverywhere(t *testing.T) {
	// Values other than the declared examples, where those would prove less.
	samples := map[string]string{"ttl": "750ms", "watchdog": "250ms", "wait": "spin:2ms", "workers": "7",
		"keys": "13", "hold": "uniform:1ms..3ms", "rate": "250",
		"read-ratio": "0.75", "permits": "3", "lock-set": "1", "procs": "2"}
	strategyOf := map[string]string{"read-ratio": "rw-lock", "permits": "semaphore", "lock-set": "multilock"}
	strategy := "token"
	resolved := func(t *testing.T, args ...string) workload.Phase {
		t.Helper()
		var f loadFlags
		fs := newFlags("run", "", io.Discard)
		f.bind(fs)
		if !slices.Contains(args, "--profile") {
			args = append([]string{"--strategy", strategy}, args...) // a profile's phases name theirs
		}
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		cfg, _, err := f.Resolve()
		if err != nil {
			t.Fatal(err)
		}
		ph := cfg.Phases[0]
		ph.Label, ph.ParamValue = "", ""
		return ph
	}
	for _, st := range workload.PhaseSettings {
		t.Run(st.Name, func(t *testing.T) {
			strategy = cmp.Or(strategyOf[st.Name], "token")
			v, ok := samples[st.Name]
			if !ok {
				decl, _ := workload.LookupSetting(st.Name)
				v = decl.Example // a new setting is tried with its declared example
			}
			viaFlag := resolved(t, "--"+st.Name, v)

			path := filepath.Join(t.TempDir(), "p.yaml")
			body := "phases:\n  - strategy: " + strategy + "\n    " + st.Name + ": " + v + "\n"
			if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			if viaProfile := resolved(t, "--profile", path); !reflect.DeepEqual(viaProfile, viaFlag) {
				t.Errorf("%s=%s: a profile phase gives %+v, the flag %+v", st.Name, v, viaProfile, viaFlag)
			}
			if !slices.Contains(profiles.PhaseKeys(), st.Name) {
				t.Errorf("%s is no key of a profile phase (%v)", st.Name, profiles.PhaseKeys())
			}

			if !st.Sweep {
				return
			}
			base := resolved(t)
			cfg := workload.Config{Strategies: []string{strategy}}
			// The ttl stays unset, as on the command line: the default it takes is marked as
			// nobody's choice (lease_default.go), as the flag's is.
			cfg.Workers, cfg.Keys, cfg.Hold, cfg.Rate = base.Workers, base.Keys, base.Hold, base.Rate
			cfg.Watchdog, cfg.Wait, cfg.MaxInflight, cfg.Duration = base.Watchdog, base.Wait, base.MaxInflight, 1
			phases, err := workload.SweepPhases(&cfg, st.Name, []string{v})
			if err != nil {
				t.Fatal(err)
			}
			viaSweep := phases[0]
			viaSweep.Label, viaSweep.ParamValue = "", ""
			if !reflect.DeepEqual(viaSweep, viaFlag) {
				t.Errorf("%s=%s: a sweep gives %+v, the flag %+v", st.Name, v, viaSweep, viaFlag)
			}
			if !slices.Contains(workload.SweepParams, st.Name) {
				t.Errorf("%s can be swept but is not among the sweep's parameters", st.Name)
			}
		})
	}
	// The profile schema's phase keys are the settings plus what only a phase has, and procs,
	// which the command runs rather than the engine (internal/fleet).
	for _, k := range profiles.PhaseKeys() {
		if _, ok := workload.LookupPhaseSetting(k); !ok && !slices.Contains([]string{"strategy", "label", "faults", "procs"}, k) {
			t.Errorf("a profile phase takes %s, which is no phase setting", k)
		}
	}
}
