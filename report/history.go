package report

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/flate"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// History is one process's critical sections in one phase of a multi-process run, kept so
// that report merge can check mutual exclusion between the processes: each process's own
// oracle sees only its own workers.
//
// Times are on a reference clock every process shares: the clock of the Redis that the
// processes meet at (its TIME, in µs). Each process measures its offset to that clock at
// the phase's start and end barriers, from the TIME round trip with the smallest delay, and
// converts its monotonic timestamps with it; UncertaintyUS bounds the error of that
// conversion (half that round trip, plus the clock's resolution and the drift between the two
// measurements). Two sections of different processes overlap for certain only when they
// overlap by more than the sum of their processes' uncertainties; report merge counts
// nothing shorter, so a correct lock is never reported unsafe.
type History struct {
	// Process is the owner prefix of the process's workers; it tells the inputs apart.
	Process string `json:"process"`
	// UncertaintyUS bounds how far this process's times may be off the reference clock.
	UncertaintyUS int64 `json:"clock_uncertainty_us"`
	// Sections counts the critical sections in Data.
	Sections int `json:"sections"`
	// Truncated is set when the process stopped recording sections to bound its memory;
	// sections after TruncatedAtUS (reference clock) are missing.
	Truncated     bool  `json:"truncated,omitempty"`
	TruncatedAtUS int64 `json:"truncated_at_us,omitempty"`
	// Data is the sections, compressed (EncodeSections): for a rw-lock, the writers'.
	Data string `json:"data"`
	// Readers is a rw-lock's read sections, encoded as Data: readers hold a key together,
	// so the check must tell them from writers. Empty for other locks.
	Readers string `json:"readers,omitempty"`
}

// Section is one critical section: a worker inside one key, from entering to leaving.
type Section struct {
	Key     int32 // the key's index in its phase
	Flags   SectionFlags
	EnterUS int64  // reference clock, µs
	ExitUS  int64  // reference clock, µs
	Fence   uint64 // the lease's fencing token, 0 without one
}

// SectionFlags say what the holder's own process already saw and counted, so that merge
// adds only what took two processes to see.
type SectionFlags uint8

const (
	// FlagOverlap: the holder entered while a worker of its own process was inside.
	FlagOverlap SectionFlags = 1 << iota
	// FlagReleased: the holder's release succeeded (removed whatever lock was there).
	FlagReleased
	// FlagMisdelete: its own process counted a misdelete here: the release removed a later
	// holder's lock, or (when the release did not succeed) this holder's lock was removed
	// under it by an earlier holder's late release.
	FlagMisdelete
	// FlagAborted: the holder abandoned its last write (--on-lost abort).
	FlagAborted
	// FlagEnterRefused, FlagExitRefused: its own resource refused the write made on
	// entering, on leaving.
	FlagEnterRefused
	FlagExitRefused
	// FlagExitStale: its own process counted the last write as a stale write.
	FlagExitStale
	// FlagUnmeasured: the section's cycle lies outside the measured window (warm-up, or it
	// ended after the window closed), so its process counted it in no acquire and no safety
	// count. Merge checks the others against it but counts nothing for it. A history whose
	// sections lack it throughout may come from a lockbench that kept every cycle unmarked.
	FlagUnmeasured
)

// EncodeSections packs sections as base64 of a deflated stream of varints, in the order of
// their entry time: each section's key, its entry as the delta to the previous entry, its
// length, its fence and its flags. It sorts secs.
func EncodeSections(secs []Section) (string, error) {
	slices.SortFunc(secs, func(a, b Section) int { return cmp.Compare(a.EnterUS, b.EnterUS) })
	var buf bytes.Buffer
	zw, err := flate.NewWriter(&buf, flate.BestSpeed)
	if err != nil {
		return "", err
	}
	var tmp [4*binary.MaxVarintLen64 + 1]byte
	var prev int64
	for _, s := range secs {
		b := binary.AppendUvarint(tmp[:0], uint64(s.Key))
		b = binary.AppendVarint(b, s.EnterUS-prev)
		b = binary.AppendUvarint(b, uint64(max(s.ExitUS-s.EnterUS, 0)))
		b = binary.AppendUvarint(b, s.Fence)
		b = append(b, byte(s.Flags))
		if _, err := zw.Write(b); err != nil {
			return "", err
		}
		prev = s.EnterUS
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// DecodeSections is the inverse of EncodeSections.
func DecodeSections(data string) ([]Section, error) {
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	r := bufio.NewReader(flate.NewReader(bytes.NewReader(raw)))
	var secs []Section
	var prev int64
	for {
		key, err := binary.ReadUvarint(r)
		if errors.Is(err, io.EOF) {
			return secs, nil
		}
		delta, err2 := binary.ReadVarint(r)
		length, err3 := binary.ReadUvarint(r)
		fence, err4 := binary.ReadUvarint(r)
		flags, err5 := r.ReadByte()
		if err := errors.Join(err, err2, err3, err4, err5); err != nil {
			return nil, fmt.Errorf("history: section %d: %w", len(secs)+1, err)
		}
		prev += delta
		secs = append(secs, Section{Key: int32(key), Flags: SectionFlags(flags), EnterUS: prev, ExitUS: prev + int64(length), Fence: fence})
	}
}
