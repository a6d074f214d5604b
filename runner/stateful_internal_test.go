package runner

import (
	"encoding/json"
	"maps"
	"testing"
)

// The stateful transforms' snapshots round-trip through Checkpoint.State, and a checkpoint of
// an older sluice (JSON of name -> base64 snapshot) still restores.
func TestStatesEncoding(t *testing.T) {
	snaps := map[string][]byte{"Group": []byte("SLWS1\x00abc"), "Count": {}, "Join": []byte("{not json")}
	got, err := decodeStates(encodeStates(snaps))
	if err != nil || !maps.EqualFunc(got, snaps, func(a, b []byte) bool { return string(a) == string(b) }) {
		t.Fatalf("round trip: got %q, %v; want %q", got, err, snaps)
	}
	old, err := json.Marshal(snaps)
	if err != nil {
		t.Fatal(err)
	}
	got, err = decodeStates(old)
	if err != nil || !maps.EqualFunc(got, snaps, func(a, b []byte) bool { return string(a) == string(b) }) {
		t.Fatalf("old checkpoint: got %q, %v; want %q", got, err, snaps)
	}
	enc := encodeStates(snaps)
	if _, err := decodeStates(enc[:len(enc)-1]); err == nil {
		t.Error("a cut snapshot decoded without an error")
	}
}
