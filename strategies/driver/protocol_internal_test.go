package driver

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// appendRequest writes what json.Marshal writes, escapes included.
func TestAppendRequestIsJSON(t *testing.T) {
	for _, req := range []request{
		{Type: msgPing, ID: 1},
		{Type: msgAcquire, ID: 18446744073709551615, Worker: "p0-w17", Key: "lockbench:k:42", TTLMS: 10000, TimeoutMS: 5000},
		{Type: msgRelease, ID: 7, Lease: "9f86d081884c7d65"},
		{Type: msgRenew, ID: 8, Lease: "l", TTLMS: -1},
		{Type: msgAcquire, ID: 9, Worker: "w\"<&>\\\n\t\x00é\u2028", Key: "ключ", TTLMS: 1, TimeoutMS: 1},
		{Type: msgAcquire, ID: 10, Key: "bad utf-8 \xff"},
		{Type: msgAcquire, ID: 11, Worker: "a&b", Key: "x>y", Lease: "<l>"},
		{Type: msgRelease, ID: 12, Lease: "l", Then: &request{Type: msgAcquire, ID: 13, Worker: "w", Key: "k\"", TTLMS: 100, TimeoutMS: 5}},
	} {
		want, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendRequest([]byte("x"), req); string(got) != "x"+string(want)+"\n" {
			t.Errorf("appendRequest(%+v) = %s, json.Marshal writes %s", req, got, want)
		}
	}
}

// parseReply's fast path reads every line as json.Unmarshal does, or leaves it to it.
func TestDecodeReplyAgreesWithJSON(t *testing.T) {
	for _, line := range []string{
		`{"type":"granted","id":12,"lease":"abc","fence":3,"valid_ms":99}`,
		` { "type" : "pong" , "id" : 1 } ` + "\n",
		`{"type":"granted","id":12,"lease":"abc","valid_ms":-5}`,
		`{"type":"granted","id":12,"lease":"abc","valid_ms":null}`,
		`{"type":"error","id":4,"message":"ERR \"quoted\" \u00e9"}`,
		`{"type":"extended","lease":"x","valid_ms":1.5}`,
		`{"type":"lost","lease":"x","extra":{"a":[1,2]}}`,
		`{"Type":"pong","ID":1}`,
		`{"type":"pong","id":01}`,
		`{"type":"pong","id":-1}`,
		`{"type":"pong","id":1e3}`,
		`{"type":"pong","id":18446744073709551616}`,
		`{"type":"pong","id":"1"}`,
		`{"type":"pong","id":1,}`,
		`{"type":"pong","id":1} trailing`,
		`{}`,
		`{"type":"pong","id":1`,
		`not json`,
		``,
		`{"type":"pong","id":1,"type":"released"}`,
		`{"type":"granted","id":2,"lease":"é"}`,
		"{\"type\":\"granted\",\"id\":2,\"lease\":\"bad \xff utf-8\"}",
	} {
		var want reply
		wantErr := json.Unmarshal([]byte(line), &want)
		got, ok := decodeReply([]byte(line))
		if !ok {
			continue
		}
		if wantErr != nil {
			t.Errorf("decodeReply(%s) read %+v; json.Unmarshal refuses it: %v", line, got, wantErr)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("decodeReply(%s) = %+v, json.Unmarshal reads %+v", line, got, want)
		}
	}
	// The common replies take the fast path.
	for _, line := range []string{`{"type":"granted","id":12,"lease":"abc","fence":3}`, `{"type":"released","id":13}`} {
		if _, ok := decodeReply([]byte(line)); !ok {
			t.Errorf("decodeReply(%s) left a common reply to encoding/json", line)
		}
	}
}

// A reply handed over just as the reader's role comes free is not lost: wait, finding both
// ready, may take the role, and must then return the reply already in its channel rather
// than read the pipe for it (where nothing more comes). Each round has even odds of taking
// the role; without the check, a round blocks and the test fails by its deadline.
func TestWaitTakesAHandedOverReply(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	p := &process{name: "test", out: newLines(r), rd: make(chan struct{}, 1), broken: make(chan struct{}),
		pending: map[uint64]*call{}, idle: time.NewTimer(time.Hour), events: func(reply) {}}
	for round := range 20 {
		p.rd <- struct{}{}
		c := &call{ch: make(chan reply, 1)}
		c.ch <- reply{Type: msgPong, ID: 1}
		got := make(chan reply, 1)
		go func() {
			r, _, _ := p.wait(c, nil)
			got <- r
		}()
		select {
		case r := <-got:
			if r.Type != msgPong {
				t.Fatalf("round %d: got %+v, want the pong", round, r)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: wait took the reader's role and never returned the reply in its channel", round)
		}
		select {
		case <-p.rd: // the role is back
		default:
			t.Fatalf("round %d: wait kept the reader's role", round)
		}
	}
}

// Each request reaches the driver's stdin in one write(2), and a request is shorter than
// PIPE_BUF, so a pipe delivers it whole: a read of the pipe's size ends at a line's end,
// whatever other requests it returns with it. docs/drivers.md promises it, so that a driver
// may have many threads read the pipe at once with no buffer between them (session 6 tried
// it in the redis-py driver: commit bf9e25d). Many goroutines write at once here, and a
// reader as large as the pipe checks every read.
func TestEachRequestIsOneWrite(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := &process{name: "test", in: w, grace: time.Minute}
	const goroutines, each = 16, 300
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				req := request{Type: msgAcquire, ID: uint64(g*each + i + 1), Worker: "w" + strconv.Itoa(g),
					Key: strings.Repeat("k", 1+i%200), TTLMS: 10000, TimeoutMS: 5000}
				if err := p.write(req); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		w.Close()
	}()
	buf := make([]byte, 1<<16) // Linux's default pipe size: a read takes all the pipe holds
	lines := 0
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if buf[n-1] != '\n' {
				t.Fatalf("a read of %d bytes ended inside a request line: %q", n, buf[max(0, n-80):n])
			}
			lines += bytes.Count(buf[:n], []byte("\n"))
		}
		if err != nil {
			break
		}
	}
	if lines != goroutines*each {
		t.Fatalf("read %d request lines, want %d", lines, goroutines*each)
	}
}
