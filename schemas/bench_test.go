package schemas

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"
)

// gameEventSchema is shaped like the GAME_EVENT records of Google's Streaming Data Generator,
// widened to about twenty fields and 1 KiB, the record size the benchmarks in QUALITY.md use.
const gameEventSchema = `
type: object
required: [eventId, eventTimestamp, username, score]
properties:
  eventId: {type: string}
  eventTimestamp: {type: integer}
  eventTime: {type: string, format: date-time}
  ipv4: {type: string}
  ipv6: {type: string}
  country: {type: string}
  username: {type: string}
  quest: {type: string}
  score: {type: integer}
  completed: {type: boolean}
  level: {type: integer}
  sessionId: {type: string}
  platform: {type: string}
  deviceModel: {type: string}
  osVersion: {type: string}
  appVersion: {type: string}
  latitude: {type: number}
  longitude: {type: number}
  durationMs: {type: integer}
  coins: {type: number}
  userAgent: {type: string}
  referrer: {type: string}
  tags: {type: array, items: {type: string}}
  guild:
    type: object
    properties:
      id: {type: integer}
      name: {type: string}
      rank: {type: string}
`

// gameEvents returns n distinct GAME_EVENT-like records of about 1 KiB, with the
// cardinalities of a real stream: unique ids and times, a few thousand users, a handful of
// countries, quests and platforms.
func gameEvents(n int) [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	uuid := func() string {
		return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", rng.Uint32(), rng.IntN(1<<16), rng.IntN(1<<12), 0x8000|rng.IntN(1<<14), rng.Uint64()&(1<<48-1))
	}
	out := make([][]byte, n)
	start := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)
	for i := range out {
		at := start.Add(time.Duration(i) * 1234567 * time.Microsecond)
		out[i] = fmt.Appendf(nil, `{"eventId":%q,"eventTimestamp":%d,"eventTime":%q,"ipv4":"%d.%d.%d.%d",`+
			`"ipv6":"2001:db8:%x::%x:%x","country":%q,"username":"player_%d","quest":%q,"score":%d,`+
			`"completed":%t,"level":%d,"sessionId":%q,"platform":%q,"deviceModel":%q,"osVersion":%q,`+
			`"appVersion":%q,"latitude":%.6f,"longitude":%.6f,"durationMs":%d,"coins":%.2f,`+
			`"userAgent":"Mozilla/5.0 (Linux; Android 14; %s) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.%d.113 Mobile Safari/537.36",`+
			`"referrer":"https://example.com/campaigns/summer-2024?utm_source=%s&utm_medium=email&utm_campaign=launch&utm_content=hero-banner-variant-b",`+
			`"tags":["ranked",%q,"season-7"],"guild":{"id":%d,"name":"Guild %d","rank":%q},`+
			`"debug":{"traceId":"%016x%016x","spanId":"%016x","sampled":true,"build":"2024.06.01-1842"}}`,
			uuid(), at.UnixMilli(), at.Format(time.RFC3339Nano),
			rng.IntN(256), rng.IntN(256), rng.IntN(256), rng.IntN(256), rng.IntN(1<<16), rng.IntN(1<<16), rng.IntN(1<<16),
			pick("Netherlands", "Germany", "United States", "Brazil", "Japan", "India", "Kenya", "France"),
			rng.IntN(5000), pick("A Break In the Ice", "Ghosts of Perdition", "Survive the Low Road"),
			rng.IntN(9900)+100, rng.IntN(2) == 0, rng.IntN(60)+1, uuid(), pick("android", "ios", "web"),
			pick("Pixel 8 Pro", "iPhone 15", "Galaxy S24", "Desktop"), pick("14.0.1", "17.5", "13"), pick("3.12.0", "3.11.2"),
			rng.Float64()*180-90, rng.Float64()*360-180, rng.IntN(600000), rng.Float64()*10000,
			pick("Pixel 8 Pro", "SM-S921B"), rng.IntN(9000)+1000, pick("newsletter", "twitter", "organic"),
			pick("weekend-event", "daily", "tournament"), rng.IntN(500), rng.IntN(500), pick("member", "officer", "leader"),
			rng.Uint64(), rng.Uint64(), rng.Uint64())
	}
	return out
}

func gameEventDecoder(b *testing.B) (*Schema, *JSONDecoder) {
	s, err := ParseJSONSchema(yamlNode(b, gameEventSchema))
	if err != nil {
		b.Fatal(err)
	}
	return s, NewJSONDecoder(s)
}

// BenchmarkJSONDecode decodes one ~1 KiB GAME_EVENT-like record per iteration, cycling
// through distinct records: Decode (the fast path: json_scan.go) and the checked path alone
// (fastjson), which was Decode before. Compare them in one run with -count, which alternates
// the two.
func BenchmarkJSONDecode(b *testing.B) {
	for _, path := range []struct {
		name   string
		decode func(*JSONDecoder, []byte) (Row, error)
	}{
		{"scan", (*JSONDecoder).Decode},
		{"checked", (*JSONDecoder).DecodeChecked},
	} {
		b.Run(path.name, func(b *testing.B) {
			_, d := gameEventDecoder(b)
			benchmarkDecode(b, gameEvents(4096), func(e []byte) (Row, error) { return path.decode(d, e) })
		})
	}
}

// benchmarkDecode decodes records one per iteration, cycling through them.
func benchmarkDecode(b *testing.B, records [][]byte, decode func([]byte) (Row, error)) {
	total := 0
	for _, e := range records {
		if _, err := decode(e); err != nil {
			b.Fatalf("%s: %v", e, err)
		}
		total += len(e)
	}
	b.SetBytes(int64(total / len(records)))
	b.ReportAllocs()
	cpu := processCPU()
	i := 0
	for b.Loop() {
		if _, err := decode(records[i%len(records)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	// CPU time, the collector's included, is what the bench harness counts, and unlike ns/op
	// it does not grow while the shared machine runs other jobs.
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
}

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAppendJSON encodes the same record back into a reused buffer.
func BenchmarkAppendJSON(b *testing.B) {
	s, d := gameEventDecoder(b)
	row, err := d.Decode(gameEvents(1)[0])
	if err != nil {
		b.Fatal(err)
	}
	buf := AppendJSON(nil, s, row)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendJSON(buf[:0], s, row)
	}
}
