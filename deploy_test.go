package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/lockbench/lockbench/internal/live"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/workload"
)

// The image is built static and stripped, runs as a numeric non-root user on a base with
// no shell, from a context .dockerignore keeps to the sources; the Job's pod runs as that
// user.
func TestDockerfileIsHardened(t *testing.T) {
	raw, err := os.ReadFile("deploy/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	var froms []string
	user := ""
	for _, line := range strings.Split(text, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "FROM":
			froms = append(froms, fields[1])
			user = "" // USER counts in the final stage only
		case "USER":
			user = fields[1]
		}
	}
	if len(froms) < 2 {
		t.Errorf("want a multi-stage build, got FROM %v", froms)
	}
	if final := froms[len(froms)-1]; !strings.Contains(final, "distroless") && final != "scratch" {
		t.Errorf("the final stage %q should be distroless or scratch: no shell", final)
	}
	uid, _, _ := strings.Cut(user, ":")
	if n, err := strconv.Atoi(uid); err != nil || n == 0 {
		t.Errorf("USER %q should be a numeric non-root uid (runAsNonRoot can only verify a number)", user)
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "-s -w"} {
		if !strings.Contains(text, want) {
			t.Errorf("the build lacks %s", want)
		}
	}

	ignore, err := os.ReadFile(".dockerignore")
	if err != nil {
		t.Fatal(".dockerignore: ", err)
	}
	for _, want := range []string{".git"} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(want) + `$`).Match(ignore) {
			t.Errorf(".dockerignore should leave out %s", want)
		}
	}
	// Nothing the build needs is left out: the sources, go.mod, and embedded files.
	for _, line := range strings.Split(string(ignore), "\n") {
		line = strings.TrimSpace(line)
		if line == "*" || strings.HasSuffix(line, ".go") || strings.HasSuffix(line, ".yaml") && !strings.HasPrefix(line, "deploy/") ||
			line == "go.mod" || line == "go.sum" || strings.HasSuffix(line, ".lua") || strings.HasSuffix(line, ".json") {
			t.Errorf(".dockerignore leaves out %q, which the build needs", line)
		}
	}

	job, err := os.ReadFile("deploy/kubernetes/job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var pod struct {
		Spec struct {
			Template struct {
				Spec struct {
					SecurityContext struct {
						RunAsUser int `yaml:"runAsUser"`
					} `yaml:"securityContext"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(job, &pod); err != nil {
		t.Fatal(err)
	}
	if got := strconv.Itoa(pod.Spec.Template.Spec.SecurityContext.RunAsUser); got != uid {
		t.Errorf("job.yaml runs as uid %s, the image as %s", got, uid)
	}
}

// The Grafana dashboard queries the series lockbench exports, by their real names.
func TestGrafanaDashboardUsesExportedMetrics(t *testing.T) {
	raw, err := os.ReadFile("deploy/grafana/lockbench.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("deploy/grafana/lockbench.json: %v", err)
	}
	// The families lockbench exports, once a phase has reported.
	m := live.New()
	h := report.NewHistogram()
	_ = h.RecordValue(100)
	m.Observe(workload.Progress{Phase: 1, Strategy: "token", Elapsed: time.Second,
		Second: workload.ProgressSecond{Duration: time.Second, Acquired: 1, Latency: h}})
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	for _, f := range fams {
		exported[f.GetName()] = true
	}
	used := map[string]bool{}
	nameRE := regexp.MustCompile(`lockbench_[a-z_]+`)
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			for _, name := range nameRE.FindAllString(q.Expr, -1) {
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_count"), "_sum")
				if !exported[base] {
					t.Errorf("panel %q queries %s, which lockbench does not export (exported: %v)", p.Title, name, exported)
				}
				used[base] = true
			}
		}
	}
	for name := range exported {
		if !used[name] {
			t.Errorf("the dashboard shows nothing of %s", name)
		}
	}
	// A Prometheus with native histograms on (as the README recommends) keeps no _bucket
	// series of a native histogram: every query on classic buckets must have the native form
	// beside it (histogram_quantile over the family itself), joined with or.
	bucketRE := regexp.MustCompile(`(lockbench_[a-z_]+)_bucket`)
	for _, p := range dash.Panels {
		for _, q := range p.Targets {
			for _, m := range bucketRE.FindAllStringSubmatch(q.Expr, -1) {
				native := regexp.MustCompile(`histogram_quantile\([^()]*sum by \((?:strategy|[a-z, ]*)\) \(rate\(` + m[1] + `\{`)
				if !native.MatchString(q.Expr) || !strings.Contains(q.Expr, " or ") {
					t.Errorf("panel %q reads %s_bucket without the native form beside it (empty with native histograms on): %s", p.Title, m[1], q.Expr)
				}
				if n := regexp.MustCompile(`sum by \(([^)]*)\) \(rate\(` + m[1] + `\{`).FindStringSubmatch(q.Expr); n != nil && strings.Contains(n[1], "le") {
					t.Errorf("panel %q groups the native histogram by le, which it has not: %s", p.Title, q.Expr)
				}
			}
		}
	}
}
