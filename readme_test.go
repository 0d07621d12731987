package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

var update = flag.Bool("update", false, "rewrite the README's flag reference from --help")

// flagBlockCommands are the commands whose flags README.md lists, each between
// <!-- flags:CMD --> and <!-- /flags:CMD --> markers.
var flagBlockCommands = []string{"run", "sweep", "capacity"}

// The README's flag reference is --help's: a flag added, renamed or redescribed without
// the README following fails here (go test -run ReadmeFlagReference -update rewrites it).
func TestReadmeFlagReference(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	runFlags := flagEntries(t, "run")
	for _, cmd := range flagBlockCommands {
		var kept []string
		for _, e := range flagEntries(t, cmd) {
			if cmd == "run" || !slices.Contains(runFlags, e) {
				kept = append(kept, e) // sweep and capacity: what differs from run
			}
		}
		block := "```\n" + strings.Join(kept, "") + "```\n"
		open, end := "<!-- flags:"+cmd+" -->\n", "<!-- /flags:"+cmd+" -->"
		i, j := strings.Index(text, open), strings.Index(text, end)
		if i < 0 || j < i {
			t.Fatalf("README.md lacks the markers %q ... %q", strings.TrimSpace(open), end)
		}
		if got := text[i+len(open) : j]; got != block {
			if *update {
				text = text[:i+len(open)] + block + text[j:]
				continue
			}
			t.Errorf("README.md's %s flags differ from '%s --help'; run: go test -run ReadmeFlagReference -update", cmd, cmd)
		}
	}
	if *update {
		if err := os.WriteFile("README.md", []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// flagEntries returns cmd's flag usage entries, each with its continuation lines.
func flagEntries(t *testing.T, cmd string) []string {
	_, help, _ := cli(cmd, "--help")
	_, flags, ok := strings.Cut(help, "Flags:\n")
	if !ok {
		t.Fatalf("%s --help has no Flags section", cmd)
	}
	var entries []string
	for _, line := range strings.SplitAfter(flags, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "-") || len(entries) == 0 {
			entries = append(entries, line)
		} else {
			entries[len(entries)-1] += line
		}
	}
	return entries
}

// docker-compose.yml's ports are the ones the README pairs with --redis and --sentinel.
func TestComposeMatchesReadme(t *testing.T) {
	raw, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Profiles    []string          `yaml:"profiles"`
			Command     any               `yaml:"command"`
			Environment map[string]string `yaml:"environment"`
			NetworkMode string            `yaml:"network_mode"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &compose); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	// topology -> the flags that reach it, built from the services' own commands.
	data := map[string][]string{}
	var sentinels []string
	master := ""
	portRE := regexp.MustCompile(`--port (\d+)`)
	monitorRE := regexp.MustCompile(`sentinel monitor (\S+) `)
	for name, s := range compose.Services {
		cmd := fmt.Sprint(s.Command)
		if s.NetworkMode != "host" {
			t.Errorf("service %s: network_mode %q; the README's addresses assume host networking", name, s.NetworkMode)
		}
		topology := "single"
		if len(s.Profiles) > 0 {
			topology = s.Profiles[0]
		}
		switch {
		case strings.Contains(cmd, "--sentinel"):
			sentinels = append(sentinels, "127.0.0.1:"+s.Environment["SENTINEL_PORT"])
			if m := monitorRE.FindStringSubmatch(cmd); m != nil {
				master = m[1]
			}
		case strings.Contains(cmd, "--replicaof"), strings.Contains(cmd, "--cluster create"):
		default:
			if m := portRE.FindStringSubmatch(cmd); m != nil {
				data[topology] = append(data[topology], "127.0.0.1:"+m[1])
			}
		}
	}
	for _, addrs := range data {
		slices.Sort(addrs)
	}
	slices.Sort(sentinels)
	want := map[string]string{
		"single":   "--redis " + strings.Join(data["single"], ","),
		"redlock":  "--redis " + strings.Join(data["redlock"], ","),
		"sentinel": "--sentinel " + strings.Join(sentinels, ",") + " --master " + master,
		"cluster":  "--redis " + data["cluster"][0],
	}
	if len(data["single"]) != 1 || len(data["redlock"]) != 5 || len(data["cluster"]) != 3 || len(sentinels) != 3 {
		t.Fatalf("unexpected compose topologies: data %v, sentinels %v", data, sentinels)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for topology, flags := range want {
		if !strings.Contains(string(readme), flags) {
			t.Errorf("README.md should pair the compose %s topology with `%s`", topology, flags)
		}
		if !strings.Contains(string(raw), flags) {
			t.Errorf("docker-compose.yml's header should show `%s` for %s", flags, topology)
		}
	}
}

// The example Kubernetes Job runs as many nodes as --node says, all at once, and names its
// barrier after the job.
func TestKubernetesJobIsConsistent(t *testing.T) {
	raw, err := os.ReadFile("deploy/kubernetes/job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var job struct {
		Kind string `yaml:"kind"`
		Spec struct {
			CompletionMode string `yaml:"completionMode"`
			Completions    int    `yaml:"completions"`
			Parallelism    int    `yaml:"parallelism"`
			Template       struct {
				Spec struct {
					Containers []struct {
						Args []string `yaml:"args"`
						Env  []struct {
							Name  string `yaml:"name"`
							Value string `yaml:"value"`
						} `yaml:"env"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(raw, &job); err != nil {
		t.Fatal(err)
	}
	c := job.Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	args := strings.Join(c.Args, " ")
	if job.Kind != "Job" || job.Spec.CompletionMode != "Indexed" || job.Spec.Parallelism != job.Spec.Completions ||
		env["NODES"] != fmt.Sprint(job.Spec.Completions) {
		t.Errorf("an Indexed Job whose pods all run at once, NODES = completions: %+v, env %v", job.Spec, env)
	}
	for _, want := range []string{"--node", "JOB_COMPLETION_INDEX + 1", "--barrier", "--format json"} {
		if !strings.Contains(args, want) {
			t.Errorf("the container's command lacks %q: %s", want, args)
		}
	}
	// The workload in ARGS must be flags and values lockbench accepts.
	fs := newFlags("run", "", io.Discard)
	var f loadFlags
	f.bind(fs)
	if err := fs.Parse(strings.Fields(env["ARGS"])); err != nil {
		t.Errorf("ARGS %q: %v", env["ARGS"], err)
	} else if _, _, err := f.resolve(); err != nil {
		t.Errorf("ARGS %q: %v", env["ARGS"], err)
	}
}
