package report

import (
	"bytes"
	"io"
)

// WriteHeader writes the run description the table report begins with (run:, target:,
// workload:, lock:, ...) on its own: what a run that has just started is about to do.
func WriteHeader(w io.Writer, s *Summary) error {
	var buf bytes.Buffer
	writeRunHeader(&buf, runHeader(s))
	_, err := w.Write(buf.Bytes())
	return err
}
