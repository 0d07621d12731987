package report

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"math"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// encodeV2 is hdrhistogram-go's Encode(V2CompressedEncodingCookieBase), byte for byte (the
// same header, counts and zlib level), with one zlib writer reused instead of one made per
// call: the library's is 830 KB at BestCompression, and every process encodes a few
// histograms a second (each second's interval; a --procs child's progress line too).
// BenchmarkEncodeHistogram: 1.7 ms and 827 KB a histogram with the library's, on this
// machine; see docs/performance.md for this one's and for what it did to a child's tail.
func encodeV2(h *hdrhistogram.Histogram) []byte {
	s := h.Export()
	last := -1 // the last count that is not zero: the library encodes up to the max's
	for i := len(s.Counts) - 1; i >= 0; i-- {
		if s.Counts[i] != 0 {
			last = i
			break
		}
	}
	enc := &theEncoder
	enc.mu.Lock()
	defer enc.mu.Unlock()
	if enc.zw == nil {
		enc.zw, _ = zlib.NewWriterLevel(&enc.z, zlib.BestCompression) // a valid level: no error
	}
	counts := enc.counts[:0]
	for i := 0; i <= last; {
		if s.Counts[i] != 0 {
			counts = appendZigZag(counts, s.Counts[i])
			i++
			continue
		}
		zeros := int64(0)
		for ; i <= last && s.Counts[i] == 0; i++ {
			zeros++
		}
		if zeros > 1 {
			counts = appendZigZag(counts, -zeros)
		} else {
			counts = appendZigZag(counts, 0)
		}
	}
	enc.counts = counts
	ratio := s.IntegerToDoubleConversionRatio
	if ratio == 0 {
		ratio = 1
	}
	raw := enc.raw[:0]
	raw = binary.BigEndian.AppendUint32(raw, uint32(hdrhistogram.V2EncodingCookieBase|0x10))
	raw = binary.BigEndian.AppendUint32(raw, uint32(len(counts)))
	raw = binary.BigEndian.AppendUint32(raw, 0) // normalizing index offset: the library's is 0
	raw = binary.BigEndian.AppendUint32(raw, uint32(int32(s.SignificantFigures)))
	raw = binary.BigEndian.AppendUint64(raw, uint64(s.LowestTrackableValue))
	raw = binary.BigEndian.AppendUint64(raw, uint64(s.HighestTrackableValue))
	raw = binary.BigEndian.AppendUint64(raw, math.Float64bits(ratio))
	raw = append(raw, counts...)
	enc.raw = raw

	enc.z.Reset()
	enc.zw.Reset(&enc.z)
	_, _ = enc.zw.Write(raw) // into a bytes.Buffer: no error
	_ = enc.zw.Close()
	out := make([]byte, 8, 8+enc.z.Len())
	binary.BigEndian.PutUint32(out, uint32(hdrhistogram.V2CompressedEncodingCookieBase|0x10))
	binary.BigEndian.PutUint32(out[4:], uint32(enc.z.Len()))
	out = append(out, enc.z.Bytes()...)
	return base64.StdEncoding.AppendEncode(nil, out)
}

// encoder is encodeV2's state, kept for the process's life: a sync.Pool would drop the
// zlib writer at every garbage collection, and make it anew after.
type encoder struct {
	mu          sync.Mutex
	zw          *zlib.Writer
	z           bytes.Buffer
	counts, raw []byte
}

var theEncoder encoder

// appendZigZag appends v as the V2 encoding's ZigZag LEB128-64b9B: seven bits a byte, the
// ninth byte all eight.
func appendZigZag(b []byte, v int64) []byte {
	u := uint64((v << 1) ^ (v >> 63))
	for range 8 {
		if u>>7 == 0 {
			return append(b, byte(u))
		}
		b = append(b, byte(u&0x7f|0x80))
		u >>= 7
	}
	return append(b, byte(u))
}
