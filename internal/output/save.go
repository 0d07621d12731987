// Package output writes what a run leaves behind — the report, its extra files — and reads
// result files back; it maps a finished run's results to the exit code they call for.
package output

// Saving a report. A report is the one thing a run leaves behind, and the run cannot be had
// again: a final write that fails must not lose it.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/lockbench/lockbench/report"
)

// WriteReport writes the summary to out, or to stdout when out is empty. The report is
// rendered first, then written: when out cannot take it (a full disk, /dev/full, a file of
// /proc), it goes to stdout instead; when stdout cannot take it (a terminal closed with
// SIGHUP), to a file in the temporary directory. The error says what failed and where the
// report went (exit 1).
func WriteReport(s *report.Summary, write report.Reporter, out string, stdout io.Writer) error {
	var buf bytes.Buffer
	if err := write(&buf, s); err != nil {
		return err
	}
	ext := ".txt"
	if bytes.HasPrefix(buf.Bytes(), []byte("{")) {
		ext = ".json"
	}
	if out == "" {
		return writeStdout(buf.Bytes(), stdout, ext)
	}
	err := writeFile(out, buf.Bytes())
	if err == nil {
		return nil
	}
	if _, serr := stdout.Write(buf.Bytes()); serr == nil {
		return fmt.Errorf("--out %s: %v; the report was written to stdout instead", out, UnwrapPath(err))
	}
	path, ferr := saveFallback(buf.Bytes(), ext)
	if ferr != nil {
		return fmt.Errorf("--out %s: %v, and stdout and the temporary directory refused the report too (%v): it is lost", out, UnwrapPath(err), ferr)
	}
	return fmt.Errorf("--out %s: %v; the report was written to %s instead", out, UnwrapPath(err), path)
}

// writeStdout writes a report to stdout, or when stdout refuses it to a file in the
// temporary directory.
func writeStdout(b []byte, stdout io.Writer, ext string) error {
	_, err := stdout.Write(b)
	if err == nil {
		return nil
	}
	path, ferr := saveFallback(b, ext)
	if ferr != nil {
		return fmt.Errorf("stdout: %v, and the temporary directory refused the report too (%v): it is lost", err, ferr)
	}
	return fmt.Errorf("stdout: %v; the report was written to %s instead", err, path)
}

// WriteHTML writes an HTML report to path (flag names it in errors); when path cannot
// take it, to a file in the temporary directory.
func WriteHTML(path string, write func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return err
	}
	err := writeFile(path, buf.Bytes())
	if err == nil {
		return nil
	}
	saved, ferr := saveFallback(buf.Bytes(), ".html")
	if ferr != nil {
		return fmt.Errorf("--html %s: %v", path, UnwrapPath(err))
	}
	return fmt.Errorf("--html %s: %v; the HTML report was written to %s instead", path, UnwrapPath(err), saved)
}

// writeFile writes b to path, created or truncated, and reports a failed write or close.
func writeFile(path string, b []byte) error {
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := file.Write(b); err != nil {
		file.Close()
		return err
	}
	return file.Close()
}

// saveFallback writes a report that its destination refused to a new file in the
// temporary directory, readable by this user only, and returns its path.
func saveFallback(b []byte, ext string) (string, error) {
	file, err := os.CreateTemp("", "lockbench-report-*"+ext)
	if err != nil {
		return "", err
	}
	if _, err := file.Write(b); err != nil {
		file.Close()
		os.Remove(file.Name())
		return "", err
	}
	if err := file.Close(); err != nil {
		os.Remove(file.Name())
		return "", err
	}
	return file.Name(), nil
}

// ProbeFile opens path for writing without truncating it, and removes it again if it did
// not exist before.
func ProbeFile(path string) error {
	_, statErr := os.Stat(path)
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	file.Close()
	if errors.Is(statErr, os.ErrNotExist) {
		return os.Remove(path)
	}
	return nil
}

// UnwrapPath drops the *PathError's repetition of the path the message already names.
func UnwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
