package html

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chromium finds a Chromium to drive headless: skipped without one, a failure when CI is
// set (scripts/test.sh installs Debian's chromium).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium not found on PATH: install it (apt-get install -y chromium)")
	}
	t.Skip("chromium not found on PATH (apt-get install -y chromium); CI=1 makes this a failure")
	return ""
}

// headless runs Chromium on a file:// page with the network off (every request goes to a
// proxy on a closed port; loopback is not bypassed), returning stdout and stderr.
func headless(t *testing.T, bin, page string, args ...string) (stdout []byte, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a busy machine, three at once
	defer cancel()
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
		"--enable-logging=stderr", "--v=0"}, args...)
	cmd := exec.CommandContext(ctx, bin, append(all, "file://"+page)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", filepath.Base(page), err, tail(errb.String()))
	}
	return out.Bytes(), errb.String()
}

// tail is the last lines of Chromium's log, for a failure message.
func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(len(lines)-15, 0):], "\n")
}

// zoomFigure is the start of a chart whose time axis zooms.
var zoomFigure = regexp.MustCompile(`<figure [^>]*data-zoom="`)

// consoleLine is a console message (console.error, an uncaught exception, a resource that
// failed to load) as Chromium logs it with --enable-logging.
var consoleLine = regexp.MustCompile(`(?m)^.*:CONSOLE[(:].*$`)

// Headless Chromium, offline, loads the reports of a run, a sweep and a capacity search:
// no console message, the script ran over every chart, every chart is in the DOM with its
// data, and the screenshots are not blank.
func TestBrowserRendersReports(t *testing.T) {
	bin := chromium(t)
	shots := filepath.Join(os.TempDir(), "lockbench-html-shots")
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		file  string
		kinds map[string]int // charts with data expected, by kind
	}{
		{"run.json", map[string]int{"timeline": 6, "latency": 3, "evidence": 3}},
		{"sweep.json", map[string]int{"sweep": 4, "timeline": 12, "latency": 6}},
		{"capacity.json", map[string]int{"capacity": 2, "timeline": 16, "latency": 8}},
	} {
		name := strings.TrimSuffix(tc.file, ".json")
		t.Run(name, func(t *testing.T) {
			t.Parallel() // most of a Chromium run is waiting: the three overlap
			page := filepath.Join(dir, name+".html")
			if err := os.WriteFile(page, []byte(render(t, load(t, tc.file))), 0o644); err != nil {
				t.Fatal(err)
			}
			// One Chromium run dumps the DOM and takes the screenshot of the same page.
			shot := filepath.Join(shots, name+".png")
			if err := os.Remove(shot); err != nil && !os.IsNotExist(err) {
				t.Fatal(err) // an earlier run's screenshot must not stand in for this one
			}
			dom, log := headless(t, bin, page, "--dump-dom", "--window-size=1280,2000", "--screenshot="+shot)
			if m := consoleLine.FindAllString(log, -1); len(m) > 0 {
				t.Errorf("console messages:\n%s", strings.Join(m, "\n"))
			}
			total := 0
			for kind, want := range tc.kinds {
				if got := charts(string(dom), kind); got != want {
					t.Errorf("the DOM has %d %s charts with data, want %d", got, kind, want)
				}
				total += want
			}
			figures := strings.Count(string(dom), `<figure class="chart"`)
			if !strings.Contains(string(dom), `data-script-ok="`+strconv.Itoa(figures)+`"`) || figures < total {
				t.Errorf("the script did not finish over the page's %d charts (want at least %d)", figures, total)
			}
			if zoomable := len(zoomFigure.FindAllIndex(dom, -1)); zoomable == 0 || strings.Count(string(dom), `class="reset"`) != zoomable {
				t.Errorf("the script gave %d of %d zoomable charts a reset button", strings.Count(string(dom), `class="reset"`), zoomable)
			}
			checkNotBlank(t, shot)
			t.Logf("screenshot: %s", shot)
		})
	}
}

// checkNotBlank decodes a PNG and fails unless it has many colours, across its height.
func checkNotBlank(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b := img.Bounds()
	if b.Dx() < 1000 || b.Dy() < 1500 {
		t.Errorf("%s: %v, want the 1280x2000 window", path, b)
	}
	// Each quarter of the page from the top has text or a chart: several colours and
	// enough pixels that are not the background.
	for q := range 4 {
		colours := map[uint32]bool{}
		inked := 0
		part := image.Rect(b.Min.X, b.Min.Y+q*b.Dy()/4, b.Max.X, b.Min.Y+(q+1)*b.Dy()/4)
		for y := part.Min.Y; y < part.Max.Y; y += 2 {
			for x := part.Min.X; x < part.Max.X; x += 2 {
				r, g, bl, _ := img.At(x, y).RGBA()
				colours[(r>>8)<<16|(g>>8)<<8|bl>>8] = true
				if r+g+bl < 3*0xf000 {
					inked++
				}
			}
		}
		if len(colours) < 8 || inked < 500 {
			t.Errorf("%s: quarter %d looks blank: %d colours, %d inked pixels", path, q+1, len(colours), inked)
		}
	}
}
