package report

import (
	"math/rand/v2"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// EncodeHistogram writes what hdrhistogram-go's own Encode writes, byte for byte, with
// its zlib writer reused: any reader of the library's encoding reads it, and results
// written before read the same.
func TestEncodeHistogramIsTheLibrarys(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	cases := map[string]func(h *hdrhistogram.Histogram){
		"one value":  func(h *hdrhistogram.Histogram) { _ = h.RecordValue(1) },
		"the lowest": func(h *hdrhistogram.Histogram) { _ = h.RecordValues(LowestUS, 3) },
		"the highest": func(h *hdrhistogram.Histogram) {
			_ = h.RecordValue(HighestUS)
			_ = h.RecordValue(7)
		},
		"huge counts": func(h *hdrhistogram.Histogram) { _ = h.RecordValues(250, 1<<62); _ = h.RecordValues(251, 1<<40) },
		"latencies": func(h *hdrhistogram.Histogram) {
			for range 20000 {
				v := int64(50 + 400*rng.ExpFloat64())
				if rng.IntN(100) == 0 {
					v *= 300
				}
				_ = h.RecordValue(v)
			}
		},
		"isolated zeros": func(h *hdrhistogram.Histogram) {
			for v := int64(1); v < 3000; v += 2 { // every other bucket: runs of one zero
				_ = h.RecordValue(v)
			}
		},
	}
	for name, fill := range cases {
		h := NewHistogram()
		fill(h)
		want, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // a reused writer encodes the same again
			got, err := EncodeHistogram(h)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("%s: encoding differs from hdrhistogram-go's:\n got %s\nwant %s", name, got, want)
			}
			back, err := DecodeHistogram(got)
			if err != nil || !back.Equals(h) {
				t.Errorf("%s: decodes to another histogram (%v)", name, err)
			}
		}
	}
	// Another geometry (the fleet's progress lines use hdrhistogram.New(1, 3_600_000_000, 3)
	// as well, but a caller may not).
	h := hdrhistogram.New(10, 1_000_000, 2)
	for range 1000 {
		_ = h.RecordValue(10 + rng.Int64N(999_000))
	}
	want, _ := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if got, _ := EncodeHistogram(h); got != string(want) {
		t.Errorf("another geometry: encoding differs from hdrhistogram-go's")
	}
}

func BenchmarkEncodeHistogram(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	h := NewHistogram()
	for range 500 {
		_ = h.RecordValue(int64(300 + 1000*rng.ExpFloat64()))
	}
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		}
	})
	b.Run("lockbench", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = EncodeHistogram(h)
		}
	})
}
