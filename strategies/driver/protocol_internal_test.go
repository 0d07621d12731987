package driver

import (
	"encoding/json"
	"reflect"
	"testing"
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
