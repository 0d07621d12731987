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

// The example Kubernetes Job runs as many nodes as --node says, all at once, names its
// barrier after the job, runs lockbench without a shell (--node auto/N), hardened, writing
// its results to a mounted volume, and is scrapeable on the port --metrics-addr serves.
func TestKubernetesJobIsConsistent(t *testing.T) {
	raw, err := os.ReadFile("deploy/kubernetes/job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type securityContext struct {
		RunAsNonRoot             *bool `yaml:"runAsNonRoot"`
		RunAsUser                int   `yaml:"runAsUser"`
		ReadOnlyRootFilesystem   *bool `yaml:"readOnlyRootFilesystem"`
		AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
		Capabilities             struct {
			Drop []string `yaml:"drop"`
		} `yaml:"capabilities"`
	}
	type container struct {
		Name    string   `yaml:"name"`
		Command []string `yaml:"command"`
		Args    []string `yaml:"args"`
		Env     []struct {
			Name  string `yaml:"name"`
			Value string `yaml:"value"`
		} `yaml:"env"`
		Ports []struct {
			ContainerPort int `yaml:"containerPort"`
		} `yaml:"ports"`
		SecurityContext securityContext `yaml:"securityContext"`
		VolumeMounts    []struct {
			Name      string `yaml:"name"`
			MountPath string `yaml:"mountPath"`
		} `yaml:"volumeMounts"`
	}
	var job struct {
		Kind string `yaml:"kind"`
		Spec struct {
			CompletionMode string `yaml:"completionMode"`
			Completions    int    `yaml:"completions"`
			Parallelism    int    `yaml:"parallelism"`
			Template       struct {
				Metadata struct {
					Annotations map[string]string `yaml:"annotations"`
				} `yaml:"metadata"`
				Spec struct {
					SecurityContext securityContext `yaml:"securityContext"`
					InitContainers  []container     `yaml:"initContainers"`
					Containers      []container     `yaml:"containers"`
					Volumes         []struct {
						Name string `yaml:"name"`
					} `yaml:"volumes"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(raw, &job); err != nil { // the first document: the Job
		t.Fatal(err)
	}
	pod := job.Spec.Template.Spec
	c := pod.Containers[0]
	env := map[string]string{"JOB_NAME": "lockbench", "JOB_COMPLETION_INDEX": "1"} // what Kubernetes sets
	for _, e := range c.Env {
		if e.Value != "" {
			env[e.Name] = e.Value
		}
	}
	if job.Kind != "Job" || job.Spec.CompletionMode != "Indexed" || job.Spec.Parallelism != job.Spec.Completions ||
		env["NODES"] != fmt.Sprint(job.Spec.Completions) {
		t.Errorf("an Indexed Job whose pods all run at once, NODES = completions: %+v, env %v", job.Spec, env)
	}
	if len(c.Command) > 0 || len(c.Args) == 0 || c.Args[0] != "run" {
		t.Errorf("the image has no shell: the container runs the image's entrypoint with args run ...; command %q, args %q", c.Command, c.Args)
	}
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"--node=auto/$(NODES)", "--barrier=$(JOB_NAME)", "--format=json", "--out=/results/", "$(JOB_COMPLETION_INDEX)"} {
		if !strings.Contains(args, want) {
			t.Errorf("the container's args lack %q: %s", want, args)
		}
	}

	// Hardened: non-root, read-only root, no escalation, no capabilities, every container.
	if sc := pod.SecurityContext; sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == 0 {
		t.Errorf("the pod should run as a non-root user: %+v", sc)
	}
	for _, ctr := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
		sc := ctr.SecurityContext
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
			!slices.Contains(sc.Capabilities.Drop, "ALL") {
			t.Errorf("container %s: want readOnlyRootFilesystem, allowPrivilegeEscalation false, capabilities drop ALL: %+v", ctr.Name, sc)
		}
	}

	// The workload in args must be flags and values lockbench accepts, $(VAR) expanded as
	// Kubernetes does; --node auto/N then names this pod's node.
	expanded := make([]string, 0, len(c.Args)-1)
	varRE := regexp.MustCompile(`\$\(([A-Z_]+)\)`)
	for _, a := range c.Args[1:] {
		expanded = append(expanded, varRE.ReplaceAllStringFunc(a, func(v string) string { return env[v[2:len(v)-1]] }))
	}
	t.Setenv("JOB_COMPLETION_INDEX", env["JOB_COMPLETION_INDEX"])
	fs := newFlags("run", "", io.Discard)
	var f loadFlags
	f.bind(fs)
	if err := fs.Parse(expanded); err != nil {
		t.Fatalf("args %q: %v", expanded, err)
	}
	if cfg, _, err := f.resolve(); err != nil {
		t.Errorf("args %q: %v", expanded, err)
	} else if cfg.Barrier == nil || cfg.Barrier.Node != 2 || cfg.Barrier.Nodes != job.Spec.Completions {
		t.Errorf("JOB_COMPLETION_INDEX=1 should make node 2/%d: %+v", job.Spec.Completions, cfg.Barrier)
	}

	// --out is on a mounted volume, not the read-only root.
	mounted := false
	for _, m := range c.VolumeMounts {
		if strings.HasPrefix(f.out, strings.TrimSuffix(m.MountPath, "/")+"/") {
			mounted = slices.ContainsFunc(pod.Volumes, func(v struct {
				Name string `yaml:"name"`
			}) bool {
				return v.Name == m.Name
			})
		}
	}
	if f.out == "" || !mounted {
		t.Errorf("--out %q should be on a mounted volume: %+v", f.out, c.VolumeMounts)
	}

	// Scrapeable: the annotations name the port --metrics-addr serves, a declared port.
	ann := job.Spec.Template.Metadata.Annotations
	_, port, _ := strings.Cut(f.metricsAddr, ":")
	if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/path"] != "/metrics" || port == "" || ann["prometheus.io/port"] != port ||
		!slices.ContainsFunc(c.Ports, func(p struct {
			ContainerPort int `yaml:"containerPort"`
		}) bool {
			return fmt.Sprint(p.ContainerPort) == port
		}) {
		t.Errorf("prometheus.io annotations %v should scrape --metrics-addr %q on a declared port %v", ann, f.metricsAddr, c.Ports)
	}
	if len(pod.InitContainers) == 0 || !strings.Contains(string(raw), "redis_exporter") {
		t.Errorf("job.yaml should show redis_exporter as a sidecar")
	}
}
