// Package benchdata is the input of the bench harness: GAME_EVENT-like JSON records of 1 KiB
// and their JSON Schema. It is a package of its own so that the decoder comparison
// (bench/jsoncmp, a module of its own) decodes the same records.
package benchdata

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// EventSchema is the JSON Schema of the records, shaped like the GAME_EVENT records of Google's
// Streaming Data Generator (ids, timestamps, strings, numbers) plus a padded note, so a record
// is about 1 KiB. eventTimestamp is microseconds since the epoch: the latency runs put the
// producer's clock there.
const EventSchema = `type: object
required: [id]
properties:
  id: {type: integer}
  eventId: {type: string}
  eventTimestamp: {type: integer}
  eventTime: {type: string, format: date-time}
  username: {type: string}
  team: {type: string}
  quest: {type: string}
  country: {type: string}
  platform: {type: string}
  score: {type: integer}
  level: {type: integer}
  completed: {type: boolean}
  latitude: {type: number}
  longitude: {type: number}
  coins: {type: number}
  userAgent: {type: string}
  note: {type: string}
`

// RecordSize is the size the generator pads each record to.
const RecordSize = 1024

var (
	words     = strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu quest guild raid loot arena")
	quests    = []string{"A Break In the Ice", "Ghosts of Perdition", "Survive the Low Road", "The Long Night"}
	countries = []string{"Netherlands", "Germany", "United States", "Brazil", "Japan", "India", "Kenya", "France"}
	platforms = []string{"android", "ios", "web", "console"}
)

// Generator makes GAME_EVENT-like JSON records. It is not safe for concurrent use.
type Generator struct {
	rng  *rand.Rand
	note []byte
}

// NewGenerator returns a generator whose records depend on seed alone.
func NewGenerator(seed uint64) *Generator {
	return &Generator{rng: rand.New(rand.NewPCG(seed, 7))}
}

// Event appends record id, stamped with tsMicro, to dst.
func (g *Generator) Event(dst []byte, id, tsMicro int64) []byte {
	r := g.rng
	start := len(dst)
	dst = fmt.Appendf(dst, `{"id":%d,"eventId":"%08x-%04x-4%03x-%04x-%012x","eventTimestamp":%d,"eventTime":%q,`+
		`"username":"player_%d","team":"team-%d","quest":%q,"country":%q,"platform":%q,"score":%d,"level":%d,`+
		`"completed":%t,"latitude":%.6f,"longitude":%.6f,"coins":%.2f,`+
		`"userAgent":"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.%d.113 Mobile Safari/537.36","note":"`,
		id, r.Uint32(), r.IntN(1<<16), r.IntN(1<<12), 0x8000|r.IntN(1<<14), r.Uint64()&(1<<48-1),
		tsMicro, time.UnixMicro(tsMicro).UTC().Format(time.RFC3339Nano),
		r.IntN(100_000), r.IntN(500), quests[r.IntN(len(quests))], countries[r.IntN(len(countries))],
		platforms[r.IntN(len(platforms))], r.IntN(10_000), r.IntN(60)+1, r.IntN(2) == 0,
		r.Float64()*180-90, r.Float64()*360-180, r.Float64()*10_000, r.IntN(9000)+1000)
	pad := RecordSize - 2 - (len(dst) - start)
	g.note = g.note[:0]
	for len(g.note) < pad {
		g.note = append(g.note, words[r.IntN(len(words))]...)
		g.note = append(g.note, ' ')
	}
	dst = append(dst, g.note[:max(pad, 0)]...)
	return append(dst, `"}`...)
}
