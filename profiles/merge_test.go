package profiles_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/cmdline"
	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/profiles"
	"github.com/lockbench/lockbench/workload"
)

// merge applies the profile in body (none when "") under the command line args, bound as
// a load command binds its flags.
func merge(t *testing.T, body string, args ...string) (workload.Config, bool, error) {
	t.Helper()
	var cfg workload.Config
	strategy, faults := "", []string(nil)
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	for _, s := range workload.Settings {
		if s.Is(workload.Flag) {
			s.Fill(&cfg)
			fs.VarP(s.Value(&cfg), s.Name, s.Short, s.Usage())
		}
	}
	fs.StringVar(&strategy, "strategy", "token", "")
	fs.StringArrayVar(&faults, "fault", nil, "")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	name := ""
	if body != "" {
		name = filepath.Join(t.TempDir(), "p.yaml")
		if err := os.WriteFile(name, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	checkFault := func(spec string) error {
		if spec == "bad" {
			return errors.New("no such fault")
		}
		return nil
	}
	got, _, own, err := profiles.Merge(name, profiles.CommandLine{Config: &cfg, Strategy: &strategy, Faults: &faults,
		Given: cmdline.Given(fs), Set: fs.Set, CheckFault: checkFault})
	return got, own, err
}

// The command line wins, the profile fills the others, the defaults whatever remains.
func TestMergeCommandLineWins(t *testing.T) {
	cfg, own, err := merge(t, "strategy: fenced\nworkers: 7\nkeys: 9\nfaults:\n  - holder-crash:p=0.1\n", "--workers", "3", "--fault", "holder-pause:p=0.1,d=1s")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Workers != 3 || cfg.Keys != 9 || !slices.Equal(cfg.Strategies, []string{"fenced"}) || own {
		t.Errorf("workers %d keys %d strategies %v own phases %v; want the command line's 3, the profile's 9 and fenced, no phases of its own",
			cfg.Workers, cfg.Keys, cfg.Strategies, own)
	}
	if !slices.Equal(cfg.Faults, []string{"holder-pause:p=0.1,d=1s"}) {
		t.Errorf("faults %v; want the command line's alone", cfg.Faults)
	}
	cfg, _, err = merge(t, "workers: 7\nfaults:\n  - holder-crash:p=0.1\n")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Workers != 7 || !slices.Equal(cfg.Faults, []string{"holder-crash:p=0.1"}) || !slices.Equal(cfg.Strategies, []string{"token"}) {
		t.Errorf("workers %d faults %v strategies %v; want the profile's 7 and fault, the default strategy", cfg.Workers, cfg.Faults, cfg.Strategies)
	}
}

// A profile's phases are the run's unless the command line names the strategies.
func TestMergeProfilePhases(t *testing.T) {
	body := "phases:\n  - strategy: fenced\n    workers: 5\n  - strategy: token\n"
	cfg, own, err := merge(t, body)
	if err != nil {
		t.Fatal(err)
	}
	if !own || len(cfg.Phases) != 2 || cfg.Phases[0].Strategy != "fenced" || cfg.Phases[0].Workers != 5 {
		t.Errorf("own %v, phases %+v; want the profile's two, fenced with 5 workers first", own, cfg.Phases)
	}
	cfg, own, err = merge(t, body, "--strategy", "token")
	if err != nil {
		t.Fatal(err)
	}
	if own || len(cfg.Phases) != 0 {
		t.Errorf("--strategy token: own %v, %d phases; want the command line's strategy, no profile phases", own, len(cfg.Phases))
	}
}

// Each error names where the value was written: the flag, or the profile's line; the
// command line is checked before the profile is read.
func TestMergeErrorsNameWhereTheValueIsWritten(t *testing.T) {
	for _, tc := range []struct {
		body string
		args []string
		want string
	}{
		{"", []string{"--workers", "0"}, "invalid --workers 0"},
		{"workers: 7\n", []string{"--workers", "0"}, "invalid --workers 0"}, // before the profile
		{"nonsense: 1\n", []string{"--workers", "0"}, "invalid --workers 0"},
		{"keys: 1\nworkers: 0\n", nil, "line 2"},
		{"strategy: all,token\n", nil, "'all' runs the articles' Redis strategies"},
		{"faults:\n  - bad\n", nil, "no such fault"},
		{"", []string{"--strategy", "all,token"}, `invalid --strategy "all,token"`},
	} {
		_, _, err := merge(t, tc.body, tc.args...)
		if err == nil || !usage.Is(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("profile %q, args %q: %v; want a usage error mentioning %q", tc.body, tc.args, err, tc.want)
		}
	}
}
