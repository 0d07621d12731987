package fleet

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/usage"
	_ "github.com/lockbench/lockbench/services/redis" // registers the Redis flags, some secret
)

// A child gets the user's flags less the parent's own and the target's, the target the
// parent opened, and who it is; the secret flags (--password, --redis URLs) go to its
// environment, never to its command line.
func TestChildArgsDropTheParentsFlagsAndHideTheSecrets(t *testing.T) {
	fl := &Fleet{
		spec: Spec{Command: "sweep", Given: []Flag{
			{"strategy", []string{"token"}}, {"format", []string{"table"}}, {"fault", []string{"a:p=1", "b:p=1"}},
			{"password", []string{"hunter2"}}, {"redis", []string{"10.0.0.1:6379"}}, {"workers", []string{"8"}},
			{"out", []string{"r.json"}}, {"procs", []string{"2"}},
		}},
		target:   []string{"--redis=127.0.0.1:7000"},
		replaced: []string{"redis"},
	}
	args, secrets := fl.childArgs(Segment{From: 1, To: 3, Procs: 2}, 2, "procs-x", "/tmp/p.json", nil)
	want := []string{"sweep", "--strategy=token", "--fault=a:p=1", "--fault=b:p=1", "--workers=8",
		"--procs-child", "--procs-phases=1:3", "--node=2/2", "--barrier=procs-x", "--format=json", "--out=/tmp/p.json", "--quiet"}
	if !slices.Equal(args, want) {
		t.Errorf("args\n%q\nwant\n%q", args, want)
	}
	if want := []string{"--password=hunter2", "--redis=127.0.0.1:7000"}; !slices.Equal(secrets, want) {
		t.Errorf("secrets %q, want %q", secrets, want)
	}
}

// Given keeps the order the flags were given in (a flag set that does not sort them), and
// every value of a flag that repeats.
func TestGivenKeepsTheOrderAndTheRepeats(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.String("zeta", "", "")
	fs.StringArray("fault", nil, "")
	fs.Int("alpha", 1, "")
	fs.Bool("unset", false, "")
	if err := fs.Parse([]string{"--zeta=z", "--fault", "a", "--alpha", "3", "--fault", "b"}); err != nil {
		t.Fatal(err)
	}
	got := Given(fs)
	want := []Flag{{"zeta", []string{"z"}}, {"fault", []string{"a", "b"}}, {"alpha", []string{"3"}}}
	if !slices.EqualFunc(got, want, func(a, b Flag) bool { return a.Name == b.Name && slices.Equal(a.Values, b.Values) }) {
		t.Errorf("Given %v, want %v", got, want)
	}
}

// A child sets the secrets it was given through its environment as flags, and clears
// them; anything but a secret flag there is refused as a usage error.
func TestTakeSecrets(t *testing.T) {
	t.Setenv(SecretsEnv, `["--password=p w=x","--redis=redis://u:p@h:1"]`)
	var set []string
	if err := TakeSecrets(func(name, value string) error { set = append(set, name+"|"+value); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := []string{"password|p w=x", "redis|redis://u:p@h:1"}; !slices.Equal(set, want) {
		t.Errorf("set %q, want %q", set, want)
	}
	if _, ok := os.LookupEnv(SecretsEnv); ok {
		t.Errorf("$%s is still set", SecretsEnv)
	}
	for raw, mention := range map[string]string{
		`["--workers=3"]`: "--workers is not a secret flag",
		`--password=x`:    "not a JSON list",
	} {
		t.Setenv(SecretsEnv, raw)
		err := TakeSecrets(func(string, string) error { return nil })
		if err == nil || !usage.Is(err) || !strings.Contains(err.Error(), mention) {
			t.Errorf("%s: %v; want a usage error mentioning %q", raw, err, mention)
		}
	}
}

// A capacity step's children run `run`: capacity's own flags are dropped, and the step's
// rate and window come after the user's flags and the target.
func TestChildArgsOfAStep(t *testing.T) {
	fl := &Fleet{spec: Spec{Command: "run", Drop: []string{"slo", "warmup"}, Given: []Flag{
		{"strategy", []string{"token,fenced"}}, {"slo", []string{"p99=5ms"}}, {"warmup", []string{"1s"}},
	}}, target: []string{"--etcd-members=3"}}
	args, _ := fl.childArgs(Segment{From: 1, To: 2, Procs: 3}, 1, "b", "o.json", []string{"--rate=500", "--warmup=0s"})
	want := []string{"run", "--strategy=token,fenced", "--etcd-members=3", "--rate=500", "--warmup=0s",
		"--procs-child", "--procs-phases=1:2", "--node=1/3", "--barrier=b", "--format=json", "--out=o.json", "--quiet"}
	if !slices.Equal(args, want) {
		t.Errorf("args\n%q\nwant\n%q", args, want)
	}
}
