// Package html writes a run's Summary, or a comparison of two runs, as one self-contained
// HTML page to send to a team: the run's description, the results table with each verdict
// explained and linked to its evidence, per result the timeline with fault events, the
// latency percentile curves, what the oracle saw, fairness and cost; a sweep's figures
// against the swept value; a capacity search's steps against its SLO.
//
// The page works offline and with scripts off: the styles and the small script are inline,
// every number is in a table, every chart is inline SVG drawn here. It refers to nothing
// outside itself (no src, href, url() or @import leaving the page). The script only adds
// what needs one: toggling series, zooming a time range.
package html

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/report"
)

//go:embed style.css
var styleCSS string

//go:embed script.js
var scriptJS string

// Write writes s as one HTML page: a run, a sweep or a capacity search, merged or not.
func Write(w io.Writer, s *report.Summary) error {
	if s == nil {
		return fmt.Errorf("html report: no summary")
	}
	p := &page{}
	p.run(s)
	return p.flush(w, titleOf(s))
}

// WriteComparison writes c (run B against baseline A) as one HTML page: per result, both
// runs' figures side by side with the ratio B/A and the regressions marked.
func WriteComparison(w io.Writer, c *report.Comparison) error {
	if c == nil {
		return fmt.Errorf("html report: no comparison")
	}
	p := &page{}
	p.comparison(c)
	return p.flush(w, "lockbench comparison: "+c.B+" against "+c.A)
}

// page is the body being built; ids hands out chart ids unique in the page.
type page struct {
	b   strings.Builder
	ids int
	toc []tocEntry
}

// tocEntry is one line of the table of contents.
type tocEntry struct{ id, text string }

// chartID returns a fresh element id.
func (p *page) chartID() string {
	p.ids++
	return "ch" + strconv.Itoa(p.ids)
}

// flush writes the whole document: head, contents, body, script.
func (p *page) flush(w io.Writer, title string) error {
	var out strings.Builder
	out.Grow(p.b.Len() + len(styleCSS) + len(scriptJS) + 4096)
	out.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	out.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	out.WriteString("<title>" + esc(title) + "</title>\n<style>\n" + styleCSS + p.paletteCSS() + "</style>\n</head>\n<body>\n")
	if len(p.toc) > 1 {
		out.WriteString("<nav class=\"toc\"><strong>Contents</strong><ul>")
		for _, e := range p.toc {
			out.WriteString(`<li><a href="#` + e.id + `">` + esc(e.text) + "</a></li>")
		}
		out.WriteString("</ul></nav>\n")
	}
	out.WriteString(p.b.String())
	out.WriteString("<script>\n" + scriptJS + "</script>\n</body>\n</html>\n")
	if _, err := io.WriteString(w, out.String()); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	return nil
}

// paletteCSS gives each series class its colour.
func (p *page) paletteCSS() string {
	var b strings.Builder
	for i, c := range palette {
		n := strconv.Itoa(i)
		b.WriteString(".c" + n + "{color:" + c + "}.sw.c" + n + "{background:" + c + "}\n")
	}
	return b.String()
}

// section opens a <section> with a heading and records it in the contents.
func (p *page) section(id, heading, class string) {
	p.toc = append(p.toc, tocEntry{id, heading})
	p.b.WriteString(`<section id="` + id + `"`)
	if class != "" {
		p.b.WriteString(` class="` + class + `"`)
	}
	p.b.WriteString("><h2>" + esc(heading) + "</h2>\n")
}

func (p *page) end() { p.b.WriteString("</section>\n") }

// para writes a paragraph of escaped text.
func (p *page) para(class, text string) {
	if class != "" {
		p.b.WriteString(`<p class="` + class + `">`)
	} else {
		p.b.WriteString("<p>")
	}
	p.b.WriteString(esc(text) + "</p>\n")
}

// list writes escaped lines as a bulleted list.
func (p *page) list(class string, lines []string) {
	if len(lines) == 0 {
		return
	}
	p.b.WriteString(`<ul class="` + class + `">`)
	for _, l := range lines {
		p.b.WriteString("<li>" + esc(l) + "</li>")
	}
	p.b.WriteString("</ul>\n")
}

// cell is one table cell: escaped text, an optional link and CSS class.
type cell struct {
	text, href, class string
	num               bool // right-aligned number
}

// table writes a table with a header row; wide tables scroll sideways on a phone.
func (p *page) table(class string, header []string, rows [][]cell) {
	p.b.WriteString(`<div class="scroll"><table class="` + class + `"><thead><tr>`)
	for _, h := range header {
		p.b.WriteString("<th>" + esc(h) + "</th>")
	}
	p.b.WriteString("</tr></thead><tbody>\n")
	for _, row := range rows {
		p.b.WriteString("<tr>")
		for _, c := range row {
			cls := c.class
			if c.num {
				cls = strings.TrimSpace(cls + " num")
			}
			if cls != "" {
				p.b.WriteString(`<td class="` + cls + `">`)
			} else {
				p.b.WriteString("<td>")
			}
			if c.href != "" {
				p.b.WriteString(`<a href="` + esc(c.href) + `">` + esc(c.text) + "</a>")
			} else {
				p.b.WriteString(esc(c.text))
			}
			p.b.WriteString("</td>")
		}
		p.b.WriteString("</tr>\n")
	}
	p.b.WriteString("</tbody></table></div>\n")
}

// dl writes label/text pairs, skipping empty texts.
func (p *page) dl(class string, pairs [][2]string) {
	p.b.WriteString(`<dl class="` + class + `">`)
	for _, kv := range pairs {
		if kv[1] == "" {
			continue
		}
		p.b.WriteString("<dt>" + esc(kv[0]) + "</dt><dd>" + esc(kv[1]) + "</dd>")
	}
	p.b.WriteString("</dl>\n")
}

// esc escapes text for HTML content and attribute values.
func esc(s string) string { return template.HTMLEscapeString(s) }

// titleOf is the page's title: kind and strategies.
func titleOf(s *report.Summary) string {
	return "lockbench " + kindOf(s) + ": " + strategyList(s)
}

// strategyList names the strategies once each (a sweep's config may repeat them).
func strategyList(s *report.Summary) string {
	var names []string
	for _, n := range s.Config.Strategies {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}

// kindOf is the Summary's kind, a run when unset.
func kindOf(s *report.Summary) string {
	if s.Kind == "" {
		return report.KindRun
	}
	return s.Kind
}

// count formats an integer with thousands separators: 1,234.
func count(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// percent formats a ratio 0..1 as a percentage with up to two decimals.
func percent(r float64) string {
	if r > 0 && r < 0.0001 {
		return "<0.01%"
	}
	return num(r*100) + "%"
}

// us formats microseconds, "-" when nothing was measured.
func us(v int64, measured bool) string {
	if !measured {
		return "-"
	}
	return report.FormatUS(float64(v))
}

// seconds formats seconds as a duration: 1.5s, 250ms.
func seconds(s float64) string { return report.FormatUS(s * 1e6) }

// ms formats milliseconds as a duration.
func ms(v int64) string { return report.FormatUS(float64(v) * 1e3) }

// ttl formats a ttl in ms; 0 is a lock without one (--ttl 0).
func ttl(v int64) string { return pick(v == 0, "none", ms(v)) }
