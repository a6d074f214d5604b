package schemas

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The fast path must take the records it is built for: were it to give up on them, Decode
// would still be right, only as slow as before.
func TestJSONScanTakesUsualRecords(t *testing.T) {
	d := NewJSONDecoder(kindsSchema())
	for _, in := range []string{
		`{"id": 1}`,
		" \t\r\n{\"id\":1}\n ",
		`{"id": 2, "s": null, "zzz": {"deep": [1, 2, {"x": "y\u00e9"}]}, "ok": null}`,
		`{"id": -9223372036854775808, "ok": true, "x": 2.5, "s": "caf\u00e9 \ud83d\ude00 \"q\"", "b": "aGVsbG8=",
		  "ts": "2024-05-01T12:00:00.123456789+02:00", "d": "2024-02-29", "price": 12.5,
		  "tags": ["a", null, "c"], "user": {"name": "ann"}, "attrs": {"k": 1, "z": -0.5},
		  "extra": {"a": [1, 2.5, "x", null, true, {"b": 1.0}], "big": 1e300},
		  "events": [{"at": 0, "days": ["1970-01-01"]}, {"at": "2000-01-01T00:00:00Z"}]}`,
		`{"s": "x", "ok": false, "id": 3, "\u0069d": 4, "tags": [], "attrs": {}, "extra": []}`,
	} {
		if _, ok := d.scan([]byte(in)); !ok {
			t.Errorf("the fast path gave up on %s", in)
		}
	}
	_, g := gameEventDecoder(&testing.B{})
	for _, e := range gameEvents(100) {
		if _, ok := g.scan(e); !ok {
			t.Fatalf("the fast path gave up on %s", e)
		}
	}
}

// TestJSONScanAgreesWithChecked holds the fast path to the checked one: whatever it accepts,
// the checked path accepts too, with the same row. The inputs are the decoder tests' records,
// the fuzz corpus, and every record of those with one byte replaced by each of the bytes that
// matter to a JSON scanner, and with one byte cut out.
func TestJSONScanAgreesWithChecked(t *testing.T) {
	seeds := []string{
		`{"id": 1, "ok": true, "x": -0.0, "s": "a\\b\/c\"d\be\ff\ng\rh\ti \u0000 \u20AC \uD834\uDD1E", "b": "AAEC",
		  "ts": 1700000000.5, "d": "2024-02-29", "price": "-12.50", "tags": ["", null, "x"],
		  "user": {"name": "n", "age": 1e2}, "attrs": {"a": 1, "b": null, "a": 2},
		  "extra": {"k": [true, false, null, 0, -1, 1.5e-3, "é", {}, []]},
		  "events": [{"at": "2000-01-01T00:00:00Z", "days": []}], "unknown": [{"x": [1, {"y": "z"}]}, "\u00e9", 3e-9, null]}`,
		`{"id":9223372036854775807,"x":1E+2,"s":"\ud83d\ude00","extra":"s","tags":["\u0041"]}`,
	}
	for _, tt := range jsonDecodeCases {
		seeds = append(seeds, tt.in)
	}
	for _, tt := range jsonDecodeErrorCases {
		seeds = append(seeds, tt.in)
	}
	files, err := filepath.Glob("testdata/fuzz/FuzzJSONDecode/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			if q, ok := strings.CutPrefix(line, "[]byte("); ok {
				if s, err := strconv.Unquote(strings.TrimSuffix(q, ")")); err == nil {
					seeds = append(seeds, s)
				}
			}
		}
	}
	marks := []byte("\"\\{}[],:0-.eE+ntfu\x00\x01\x1f\x7f\x80\xc3\xed\xff \t")
	d := NewJSONDecoder(kindsSchema())
	checked, fast := 0, 0
	agree := func(in []byte) {
		checked++
		row, ok := d.scan(in)
		if !ok {
			return
		}
		fast++
		want, err := d.DecodeChecked(in)
		if err != nil {
			t.Fatalf("the fast path accepted %q, the checked path says %v", in, err)
		}
		if !sameValue(row, want) {
			t.Fatalf("%q:\n fast    %#v\n checked %#v", in, row, want)
		}
	}
	for _, seed := range seeds {
		in := []byte(seed)
		agree(in)
		for i := range in {
			agree(append(append([]byte{}, in[:i]...), in[i+1:]...))
			for _, m := range marks {
				mutated := append([]byte{}, in...)
				mutated[i] = m
				agree(mutated)
			}
		}
	}
	t.Logf("%d inputs, %d taken by the fast path", checked, fast)
	if fast < checked/20 {
		t.Errorf("the fast path took %d of %d inputs: the check above hardly ran", fast, checked)
	}
}

// exactFloat agrees with strconv.ParseFloat on the numbers it takes.
func TestExactFloat(t *testing.T) {
	for _, in := range []string{"0", "-0", "0.0", "1", "-1.5", "52.379189", "4.827632", "0.1", "0.3",
		"123456789012345", "1234567.89012345", "0.000000000000001", "-999999999999999", "9007199254740993",
		"1234567890123456", "0.1234567890123456", "1e5", "2.5E-3"} {
		f, ok := exactFloat([]byte(in))
		want, err := strconv.ParseFloat(in, 64)
		if err != nil {
			t.Fatal(err)
		}
		digits := len(strings.NewReplacer("-", "", ".", "").Replace(in))
		if wantOK := digits <= 15 && !strings.ContainsAny(in, "eE"); ok != wantOK {
			t.Errorf("%s: ok %v, want %v", in, ok, wantOK)
		}
		if ok && (f != want || math.Signbit(f) != math.Signbit(want)) {
			t.Errorf("%s: got %v, want %v", in, f, want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		digits := strconv.FormatUint(rng.Uint64N(1_000_000_000_000_000), 10)
		at := rng.IntN(len(digits) + 1)
		in := digits[:at] + "." + digits[at:]
		if at == 0 || at == len(digits) {
			in = digits
		}
		f, ok := exactFloat([]byte(in))
		if want, _ := strconv.ParseFloat(in, 64); !ok || f != want {
			t.Fatalf("%s: got %v, %v; want %v", in, f, ok, want)
		}
	}
}

// A stream of records the fast path gives up on goes to the checked path alone for a while,
// then the fast path is tried again; every record decodes as the checked path says.
func TestJSONScanPausesOnMisses(t *testing.T) {
	d := NewJSONDecoder(kindsSchema())
	lenient := []byte("{\"id\": 1, \"s\": \"raw\ttab\\n\"}") // accepted by the checked path only
	for i := range scanMisses {
		row, err := d.Decode(lenient)
		if err != nil || row[0] != int64(1) || row[3] != "raw\ttab\n" {
			t.Fatalf("record %d: %v, %v", i, row, err)
		}
	}
	if d.skip != scanPause {
		t.Fatalf("after %d misses, %d records skip the fast path; want %d", scanMisses, d.skip, scanPause)
	}
	for range scanPause {
		if _, err := d.Decode([]byte(`{"id": 2}`)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.Decode([]byte(`{"id": 3}`)); err != nil || d.skip != 0 || d.misses != 0 {
		t.Fatalf("after the pause: skip %d, misses %d, %v; want the fast path again", d.skip, d.misses, err)
	}
}
