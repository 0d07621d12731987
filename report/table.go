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
// run description, one row per result, a legend of the abbreviated headers, then notes
// (phase errors, Summary.Notes, an interrupted run). Lines fit in about 130 columns.
func ResultsTable(w io.Writer, s *Summary) error {
	var buf bytes.Buffer
	writeRunHeader(&buf, s)
	buf.WriteByte('\n')
	header, rows := resultsGrid(s.Results)
	if err := renderTable(&buf, header, rows, numericAlign(len(header))); err != nil {
		return fmt.Errorf("table report: %w", err)
	}
	buf.WriteByte('\n')
	writeLines(&buf, legendLines(s.Results))
	if notes := noteLines(s); len(notes) > 0 {
		buf.WriteByte('\n')
		writeLines(&buf, notes)
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
func writeRunHeader(buf *bytes.Buffer, s *Summary) {
	lines := runHeader(s)
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

// numericAlign aligns the first of n columns left and the others right.
func numericAlign(n int) tw.Alignment {
	align := make(tw.Alignment, n)
	for i := range align {
		align[i] = tw.AlignRight
	}
	if n > 0 {
		align[0] = tw.AlignLeft
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
