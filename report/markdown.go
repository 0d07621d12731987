package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// Markdown writes s as GitHub-flavoured Markdown (format "markdown"), for pasting into an
// issue or a pull request: the run description as a list, the same tables as ResultsTable,
// the legend, and the notes.
func Markdown(w io.Writer, s *Summary) error {
	h := humanReportOf(s)
	var buf bytes.Buffer
	for _, l := range h.header {
		fmt.Fprintf(&buf, "- **%s:** %s\n", l.label, mdText(l.text))
	}
	for _, sec := range h.sections {
		buf.WriteByte('\n')
		if sec.title != "" {
			buf.WriteString("**" + mdText(sec.title) + "**\n\n")
		}
		writeMarkdownTable(&buf, sec.grid)
		if len(sec.after) > 0 {
			buf.WriteByte('\n')
			writeMarkdownParagraph(&buf, sec.after)
		}
	}
	buf.WriteByte('\n')
	writeMarkdownParagraph(&buf, h.legend)
	if len(h.notes) > 0 {
		buf.WriteByte('\n')
		for _, n := range h.notes {
			buf.WriteString("- " + mdText(n) + "\n")
		}
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("markdown report: %w", err)
	}
	return nil
}

// writeMarkdownTable writes g as a GFM table: text columns left-aligned, numbers right.
func writeMarkdownTable(buf *bytes.Buffer, g grid) {
	writeMarkdownRow(buf, g.header)
	rule := make([]string, len(g.header))
	for i := range rule {
		rule[i] = "---:"
		if i < len(g.text) && g.text[i] {
			rule[i] = ":---"
		}
	}
	buf.WriteString("| " + strings.Join(rule, " | ") + " |\n")
	for _, row := range g.rows {
		writeMarkdownRow(buf, row)
	}
}

// writeMarkdownRow writes one table row, cells escaped.
func writeMarkdownRow(buf *bytes.Buffer, cells []string) {
	escaped := make([]string, len(cells))
	for i, c := range cells {
		escaped[i] = mdCell(c)
	}
	buf.WriteString("| " + strings.Join(escaped, " | ") + " |\n")
}

// writeMarkdownParagraph writes lines as one paragraph with a hard line break between them.
func writeMarkdownParagraph(buf *bytes.Buffer, lines []string) {
	for i, l := range lines {
		buf.WriteString(mdText(l))
		if i < len(lines)-1 {
			buf.WriteString("<br>")
		}
		buf.WriteByte('\n')
	}
}

// mdCell escapes a table cell: pipes would end the cell, newlines the row.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}

// mdText escapes running text (errors, notes come from anywhere): characters that would
// start emphasis, code, links or HTML are backslash-escaped, and newlines become spaces.
func mdText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_[]<>|", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
