package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"unicode"

	"go.yaml.in/yaml/v3"
)

var update = flag.Bool("update", false, "rewrite docs/flags.md's flag reference from --help")

// flagReference is the file that lists the flags of flagBlockCommands, each between
// <!-- flags:CMD --> and <!-- /flags:CMD --> markers.
const flagReference = "docs/flags.md"

var flagBlockCommands = []string{"run", "sweep", "capacity"}

// The flag reference is --help's: a flag added, renamed or redescribed without the docs
// following fails here (go test -run DocsFlagReference -update rewrites it).
func TestDocsFlagReference(t *testing.T) {
	doc, err := os.ReadFile(flagReference)
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
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
			t.Fatalf("%s lacks the markers %q ... %q", flagReference, strings.TrimSpace(open), end)
		}
		if got := text[i+len(open) : j]; got != block {
			if *update {
				text = text[:i+len(open)] + block + text[j:]
				continue
			}
			t.Errorf("%s's %s flags differ from '%s --help'; run: go test -run DocsFlagReference -update", flagReference, cmd, cmd)
		}
	}
	if *update {
		if err := os.WriteFile(flagReference, []byte(text), 0o644); err != nil {
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

// docker-compose.yml's ports are the ones docs/targets.md pairs with --redis and --sentinel.
func TestComposeMatchesDocs(t *testing.T) {
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
			t.Errorf("service %s: network_mode %q; the docs' addresses assume host networking", name, s.NetworkMode)
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
	doc, err := os.ReadFile("docs/targets.md")
	if err != nil {
		t.Fatal(err)
	}
	for topology, flags := range want {
		if !strings.Contains(string(doc), flags) {
			t.Errorf("docs/targets.md should pair the compose %s topology with `%s`", topology, flags)
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
	if cfg, _, err := f.Resolve(); err != nil {
		t.Errorf("args %q: %v", expanded, err)
	} else if cfg.Barrier == nil || cfg.Barrier.Node != 2 || cfg.Barrier.Nodes != job.Spec.Completions {
		t.Errorf("JOB_COMPLETION_INDEX=1 should make node 2/%d: %+v", job.Spec.Completions, cfg.Barrier)
	}

	// --out is on a mounted volume, not the read-only root.
	mounted := false
	for _, m := range c.VolumeMounts {
		if strings.HasPrefix(f.Out, strings.TrimSuffix(m.MountPath, "/")+"/") {
			mounted = slices.ContainsFunc(pod.Volumes, func(v struct {
				Name string `yaml:"name"`
			}) bool {
				return v.Name == m.Name
			})
		}
	}
	if f.Out == "" || !mounted {
		t.Errorf("--out %q should be on a mounted volume: %+v", f.Out, c.VolumeMounts)
	}

	// Scrapeable: the annotations name the port --metrics-addr serves, a declared port.
	ann := job.Spec.Template.Metadata.Annotations
	_, port, _ := strings.Cut(f.MetricsAddr, ":")
	if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/path"] != "/metrics" || port == "" || ann["prometheus.io/port"] != port ||
		!slices.ContainsFunc(c.Ports, func(p struct {
			ContainerPort int `yaml:"containerPort"`
		}) bool {
			return fmt.Sprint(p.ContainerPort) == port
		}) {
		t.Errorf("prometheus.io annotations %v should scrape --metrics-addr %q on a declared port %v", ann, f.MetricsAddr, c.Ports)
	}
	if len(pod.InitContainers) == 0 || !strings.Contains(string(raw), "redis_exporter") {
		t.Errorf("job.yaml should show redis_exporter as a sidecar")
	}
}

// docFiles are the Markdown files a reader follows: the README and the manual in docs/.
func docFiles(t *testing.T) []string {
	files, err := filepath.Glob("docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("docs/*.md: %v (%d files)", err, len(files))
	}
	return append([]string{"README.md"}, files...)
}

// Every relative link of the README and the docs reaches a file of the repository, and
// every #anchor a heading of its target; every repository path they show in code
// (`report/legacy.go`, `deploy/Dockerfile`) exists.
func TestDocsLinksResolve(t *testing.T) {
	repo := os.DirFS(".")
	for _, f := range docFiles(t) {
		problems, err := docProblems(repo, filepath.ToSlash(f))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Errorf("%s: %s", f, p)
		}
	}
}

// The link check finds what it is for: a missing file, a missing heading, a path out of the
// repository, a file named in code that is not there; and passes what is right.
func TestDocsLinkCheckFindsDanglingLinks(t *testing.T) {
	repo := map[string]string{
		"README.md": "# Top\n\n## Two commands: `run`\n\nSee [a](docs/a.md#the-a-page), [b](docs/b.md), " +
			"[c](docs/a.md#nothing-here), [d](#two-commands-run), [e](#two-commands-run-1), " +
			"[f](../elsewhere/x.txt), [g](https://example.com/x.md), `docs/a.md`, `docs/gone.go`, `gone_test.go`.\n" +
			"```\n[h](docs/in-code.md)\n## not a heading\n```\n",
		"docs/a.md":      "# The A page\n\n![pic](img/p.png) ![missing](img/q.png) [up](../README.md#top) [up2](../README.md#not-a-heading)\n",
		"docs/img/p.png": "",
	}
	want := map[string][]string{
		"README.md": {
			`link docs/b.md: no such file`,
			`link docs/a.md#nothing-here: docs/a.md has no heading "nothing-here"`,
			`link #two-commands-run-1: README.md has no heading "two-commands-run-1"`,
			`link ../elsewhere/x.txt: outside the repository`,
			"`docs/gone.go`: no such file in the repository",
			"`gone_test.go`: no such file in the repository",
		},
		"docs/a.md": {
			`link img/q.png: no such file`,
			`link ../README.md#not-a-heading: README.md has no heading "not-a-heading"`,
		},
	}
	fsys := fstest.MapFS{}
	for name, text := range repo {
		fsys[name] = &fstest.MapFile{Data: []byte(text)}
	}
	for file, w := range want {
		got, err := docProblems(fsys, file)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, w) {
			t.Errorf("%s:\n got %q\nwant %q", file, got, w)
		}
	}
}

func TestGitHubSlugs(t *testing.T) {
	for heading, want := range map[string]string{
		"Verdicts: what the oracle counts":                   "verdicts-what-the-oracle-counts",
		"A fleet on one machine: `--procs`":                  "a-fleet-on-one-machine---procs",
		"Other lock services: etcd, ZooKeeper, PostgreSQL":   "other-lock-services-etcd-zookeeper-postgresql",
		"Watching a run live: `--metrics-addr` and `--live`": "watching-a-run-live---metrics-addr-and---live",
		"Seed 000: two ways, GETSET and SETNX":               "seed-000-two-ways-getset-and-setnx",
		"snake_case & Ünïcode (v1.2)":                        "snake_case--ünïcode-v12",
		"[linked](x.md) heading":                             "linked-heading",
	} {
		if got := githubSlug(heading); got != want {
			t.Errorf("githubSlug(%q) = %q, want %q", heading, got, want)
		}
	}
}

// Comments and docs cite only what the repository holds: not the notes its authors kept
// beside it (the design and ecosystem notes, the shared seed texts), which a reader of a
// clone cannot open.
func TestNoCitationOutsideRepository(t *testing.T) {
	t.Parallel()
	outside := regexp.MustCompile(`\b(DESIGN|ECOSYSTEM)\.md\b|\.\./shared\b`)
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir // .git, editors' and tools' directories
			}
			return nil
		}
		if ext := filepath.Ext(p); ext != ".go" && ext != ".md" {
			return nil
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		// Every match contains one of these: a file without them has none, and the
		// regexp (no literal prefix to skip ahead by) takes seconds over the tree's 3 MB
		// under the race detector.
		if !slices.ContainsFunc([]string{"DESIGN", "ECOSYSTEM", "/shared"}, func(s string) bool { return bytes.Contains(raw, []byte(s)) }) {
			return nil
		}
		for i, line := range strings.Split(string(raw), "\n") {
			if m := outside.FindString(line); m != "" {
				t.Errorf("%s:%d cites %s, which is not in the repository: cite docs/ or nothing", p, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

var (
	fenceRE     = regexp.MustCompile("(?m)^ {0,3}(```|~~~)")
	codeSpanRE  = regexp.MustCompile("`+[^`]+`+")
	inlineRE    = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refDefRE    = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)`)
	htmlLinkRE  = regexp.MustCompile(`(?i)\b(?:href|src)="([^"]+)"`)
	headingRE   = regexp.MustCompile(`^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$`)
	repoPathRE  = regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*/?$`)
	sourceExtRE = regexp.MustCompile(`^[A-Za-z0-9_-]+\.(go|lua|sh|yaml|yml)$`)
)

// prose returns a Markdown file's text outside fenced code blocks, line by line (fenced
// lines are blanked, so line numbers hold).
func prose(text string) []string {
	lines := strings.Split(text, "\n")
	in := false
	for i, l := range lines {
		if fenceRE.MatchString(l) {
			in = !in
			lines[i] = ""
		} else if in {
			lines[i] = ""
		}
	}
	return lines
}

// githubSlug is the anchor GitHub gives a heading: its text lower-cased, without
// punctuation, spaces turned into hyphens. A repeated heading gets -1, -2, ... (headings).
func githubSlug(heading string) string {
	heading = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(heading, "$1") // a link's text
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r) || unicode.Is(unicode.Pc, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// headings returns the anchors of a Markdown file's headings.
func headings(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, l := range prose(text) {
		m := headingRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		slug := githubSlug(m[1])
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// docProblems lists the links of the Markdown file at file (a slash path in fsys, the
// repository) that lead nowhere in the repository, and the repository paths its code
// spans name that do not exist.
func docProblems(fsys fs.FS, file string) ([]string, error) {
	raw, err := fs.ReadFile(fsys, file)
	if err != nil {
		return nil, err
	}
	text := strings.Join(prose(string(raw)), "\n")
	var problems []string
	var links []string
	for _, re := range []*regexp.Regexp{inlineRE, refDefRE, htmlLinkRE} {
		for _, m := range re.FindAllStringSubmatch(codeSpanRE.ReplaceAllString(text, "``"), -1) {
			links = append(links, m[1])
		}
	}
	for _, link := range links {
		if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
			continue
		}
		target, anchor, _ := strings.Cut(link, "#")
		if target == "" {
			target = file
		} else {
			target = path.Join(path.Dir(file), target)
			if !fs.ValidPath(target) {
				problems = append(problems, fmt.Sprintf("link %s: outside the repository", link))
				continue
			}
			if _, err := fs.Stat(fsys, target); err != nil {
				problems = append(problems, fmt.Sprintf("link %s: no such file", link))
				continue
			}
		}
		if anchor == "" {
			continue
		}
		doc, err := fs.ReadFile(fsys, target)
		if err != nil || !headings(string(doc))[anchor] {
			problems = append(problems, fmt.Sprintf("link %s: %s has no heading %q", link, target, anchor))
		}
	}
	names, err := baseNames(fsys)
	if err != nil {
		return nil, err
	}
	for _, span := range codeSpanRE.FindAllString(text, -1) {
		p := strings.Trim(span, "`")
		switch {
		case sourceExtRE.MatchString(p): // a file named alone: somewhere in the repository
			if !names[p] {
				problems = append(problems, fmt.Sprintf("`%s`: no such file in the repository", p))
			}
		case strings.Contains(p, "/") && repoPathRE.MatchString(p) && !placeholderRE.MatchString(p):
			// a path whose first element is the repository's: from its root
			first, _, _ := strings.Cut(p, "/")
			if _, err := fs.Stat(fsys, first); err != nil {
				continue // hdr/token.hlog, go.etcd.io/...: an example or a module, not ours
			}
			if _, err := fs.Stat(fsys, strings.TrimSuffix(p, "/")); err != nil {
				problems = append(problems, fmt.Sprintf("`%s`: no such file in the repository", p))
			}
		}
	}
	return problems, nil
}

// placeholderRE matches a path with a part to fill in: strategies/NAME.go.
var placeholderRE = regexp.MustCompile(`(^|/)[A-Z]+(\.|/|$)`)

// baseNames returns the names of the repository's files, wherever they are.
func baseNames(fsys fs.FS) (map[string]bool, error) {
	names := map[string]bool{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != "." && strings.HasPrefix(d.Name(), ".") {
			return fs.SkipDir
		}
		names[d.Name()] = true
		return nil
	})
	return names, err
}

// Every lockbench command the README and the docs show names a command that exists and
// only flags it has: a renamed or removed flag fails here, wherever it is shown.
func TestDocsCommandsUseRealFlags(t *testing.T) {
	flagsOf := map[string]map[string]bool{} // "run", "report merge" -> "--workers", "-w", ...
	known := func(cmd string) map[string]bool {
		if f, ok := flagsOf[cmd]; ok {
			return f
		}
		code, help, _ := cli(append(strings.Fields(cmd), "--help")...)
		var f map[string]bool
		if code == 0 {
			f = map[string]bool{"--help": true, "-h": true}
			for _, m := range helpFlagRE.FindAllStringSubmatch(help, -1) {
				f["--"+m[2]] = true
				if m[1] != "" {
					f["-"+m[1]] = true
				}
			}
		}
		flagsOf[cmd] = f
		return f
	}
	shown := 0
	for _, file := range docFiles(t) {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range shownCommands(string(raw)) {
			args := strings.Fields(line)[1:]
			if len(args) == 0 || args[0] == "help" || args[0] == "version" {
				continue
			}
			cmd := args[0]
			if (cmd == "report" || cmd == "profiles") && len(args) > 1 && !strings.HasPrefix(args[1], "-") {
				cmd += " " + args[1]
			}
			flags := known(cmd)
			if flags == nil {
				t.Errorf("%s: `%s`: no command %q", file, line, cmd)
				continue
			}
			shown++
			for _, a := range args {
				a = strings.Trim(a, "[]") // [--threshold 10]: optional
				name, _, _ := strings.Cut(a, "=")
				if strings.HasPrefix(a, "-") && a != "-" && !flags[name] {
					t.Errorf("%s: `%s`: %s has no flag %s", file, line, cmd, name)
				}
			}
		}
	}
	t.Logf("%d commands checked", shown)
	if shown < 20 {
		t.Errorf("found %d commands in the docs; the extraction is broken", shown)
	}
}

var (
	helpFlagRE  = regexp.MustCompile(`(?m)^\s+(?:-(\w), )?--([\w-]+)`)
	shownCmdRE  = regexp.MustCompile(`^(?:\$ )?((?:lockbench|go run \.) .*)`)
	shellTailRE = regexp.MustCompile(`\s+(#|\||>|2>|&&).*$`)
)

// shownCommands returns the lockbench command lines a Markdown text shows: in code blocks
// (a leading "$ " dropped, "\" continuations joined) and in code spans, as "lockbench ARGS"
// without a trailing comment, pipe or redirection.
func shownCommands(text string) []string {
	var cmds []string
	add := func(s string) {
		if m := shownCmdRE.FindStringSubmatch(strings.TrimSpace(s)); m != nil {
			c := shellTailRE.ReplaceAllString(m[1], "")
			cmds = append(cmds, "lockbench"+strings.TrimPrefix(strings.TrimPrefix(c, "lockbench"), "go run ."))
		}
	}
	lines := strings.Split(text, "\n")
	in := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if fenceRE.MatchString(l) {
			in = !in
			continue
		}
		if in || strings.HasPrefix(l, "    ") {
			for strings.HasSuffix(l, "\\") && i+1 < len(lines) {
				i++
				l = strings.TrimSuffix(l, "\\") + " " + strings.TrimSpace(lines[i])
			}
			add(l)
			continue
		}
		for _, span := range codeSpanRE.FindAllString(l, -1) {
			add(strings.Trim(span, "`"))
		}
	}
	return cmds
}

// The README's two commands are the front door: both shown as they are to be typed, the
// profile the first one names built in, the script the second one names executable.
func TestReadmeTwoCommands(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"go run . run --profile quickstart", "scripts/test.sh"} {
		if !strings.Contains(string(readme), "\n    "+cmd+"\n") {
			t.Errorf("README.md should show `%s` as a command of its own", cmd)
		}
	}
	if code, _, stderr := cli("profiles", "show", "quickstart"); code != 0 {
		t.Errorf("profiles show quickstart: exit %d: %s", code, stderr)
	}
	if fi, err := os.Stat("scripts/test.sh"); err != nil {
		t.Error(err)
	} else if fi.Mode()&0o111 == 0 {
		t.Errorf("scripts/test.sh should be executable: %v", fi.Mode())
	}
}
