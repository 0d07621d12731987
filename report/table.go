package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// ResultsTable writes s for a person reading a terminal (format "table", the default): the
// run description; the results (one row per result; for a sweep grouped by strategy with
// the swept value first; for a capacity search a table of steps and the answer per
// strategy); a legend of the abbreviated headers; then notes (phase errors, faults and
// their events, Summary.Notes, recommendations, an interrupted run). Lines fit in about 130
// columns.
func ResultsTable(w io.Writer, s *Summary) error {
	h := humanReportOf(s)
	var buf bytes.Buffer
	writeRunHeader(&buf, h.header)
	for _, sec := range h.sections {
		buf.WriteByte('\n')
		if sec.title != "" {
			buf.WriteString(sec.title + "\n")
		}
		if err := renderTable(&buf, sec.grid.header, sec.grid.rows, sec.grid.alignment()); err != nil {
			return fmt.Errorf("table report: %w", err)
		}
		writeLines(&buf, sec.after)
	}
	buf.WriteByte('\n')
	writeLines(&buf, h.legend)
	if len(h.notes) > 0 {
		buf.WriteByte('\n')
		writeLines(&buf, h.notes)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("table report: %w", err)
	}
	return nil
}

// Table writes a left-aligned table in the style of the results table: no borders, columns
// two spaces apart, header as given. Other commands use it for their listings.
func Table(w io.Writer, header []string, rows [][]string) error {
	return renderTable(w, header, rows, nil)
}

// writeRunHeader writes the run description as "label:  text" lines, labels aligned.
func writeRunHeader(buf *bytes.Buffer, lines []headerLine) {
	width := 0
	for _, l := range lines {
		width = max(width, len(l.label))
	}
	for _, l := range lines {
		fmt.Fprintf(buf, "%-*s  %s\n", width+1, l.label+":", l.text)
	}
}

// writeLines writes each line followed by a newline.
func writeLines(buf *bytes.Buffer, lines []string) {
	for _, l := range lines {
		buf.WriteString(l)
		buf.WriteByte('\n')
	}
}

// alignment aligns the grid's text columns left and its number columns right.
func (g grid) alignment() tw.Alignment {
	align := make(tw.Alignment, len(g.header))
	for i := range align {
		align[i] = tw.AlignRight
		if i < len(g.text) && g.text[i] {
			align[i] = tw.AlignLeft
		}
	}
	return align
}

// columnGap separates columns.
const columnGap = "  "

// renderTable renders header and rows borderless (kubectl style) with tablewriter, columns
// aligned per align (nil = all left), and writes it to w without trailing spaces.
func renderTable(w io.Writer, header []string, rows [][]string, align tw.Alignment) error {
	if align == nil {
		align = make(tw.Alignment, len(header))
		for i := range align {
			align[i] = tw.AlignLeft
		}
	}
	var buf bytes.Buffer
	table := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders:  tw.BorderNone,
			Symbols:  tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{Lines: tw.LinesNone, Separators: tw.SeparatorsNone},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithPadding(tw.Padding{Left: tw.Empty, Right: columnGap, Overwrite: true}),
		tablewriter.WithAlignment(align),
	)
	table.Header(header)
	if err := table.Bulk(rows); err != nil {
		return fmt.Errorf("render table: %w", err)
	}
	if err := table.Render(); err != nil {
		return fmt.Errorf("render table: %w", err)
	}
	_, err := io.WriteString(w, trimTrailingSpace(buf.String()))
	return err
}

// trimTrailingSpace removes spaces at the end of every line of text.
func trimTrailingSpace(text string) string {
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		nl := strings.HasSuffix(l, "\n")
		l = strings.TrimRight(l, " \n")
		if nl {
			l += "\n"
		}
		lines[i] = l
	}
	return strings.Join(lines, "")
}
