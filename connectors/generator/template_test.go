package generator

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// render parses src and renders message index of seed at the time at.
func render(t *testing.T, src string, seed uint64, index int64, at time.Time) string {
	t.Helper()
	tmpl, err := Parse(src)
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	out, err := tmpl.NewRenderer(seed).Render(nil, index, at)
	if err != nil {
		t.Fatalf("Render(%q): %v", src, err)
	}
	return string(out)
}

var at = time.Date(2024, 5, 6, 7, 8, 9, 123_000_000, time.UTC)

// TestFunctions renders every function: each output must match its pattern in many messages.
// A function missing from the table fails the test.
func TestGeneratorFunctions(t *testing.T) {
	cases := []struct{ call, want string }{
		{`integer(-3, 3)`, `^-?[0-3]$`},
		{`long(10000000000, 10000000001)`, `^1000000000[01]$`},
		{`float(1, 2)`, `^1\.[0-9]+$|^2\.0$|^1\.0$`},
		{`floating(0, 0.5, "%.2f")`, `^0\.[0-5][0-9]$`},
		{`double(-1, 1)`, `^-?[01]\.[0-9]+$`},
		{`double(5, 5)`, `^5\.0$`},
		{`double(1, 100, "%.3f")`, `^[0-9]{1,3}\.[0-9]{3}$`},
		{`uuid()`, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`},
		{`uuid("false")`, `^[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$`},
		{`guid()`, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`},
		{`hex()`, `^[0-9a-f]{32}$`},
		{`hex(3)`, `^[0-9a-f]{6}$`},
		{`objectId()`, `^[0-9a-f]{24}$`},
		{`bool()`, `^(true|false)$`},
		{`bool(1)`, `^true$`},
		{`bool(0)`, `^false$`},
		{`index()`, `^7$`},
		{`index(100)`, `^107$`},
		{`index("outer")`, `^7$`},
		{`index("outer", 5)`, `^12$`},
		{`lorem(3, "words")`, `^[a-z]+ [a-z]+ [a-z]+$`},
		{`lorem(2, "paragraphs")`, `^([A-Z][a-z ]+\. ?)+\n\n([A-Z][a-z ]+\. ?)+$`},
		{`phone()`, `^[0-9]{3}-[0-9]{3}-[0-9]{4}$`},
		{`ssn()`, `^[0-9]{3}-[0-9]{2}-[0-9]{4}$`},
		{`gender()`, `^(male|female)$`},
		{`country()`, `^[A-Z][A-Za-z -]+$`},
		{`city()`, `^[A-Z][A-Za-z .]+$`},
		{`state()`, `^[A-Z][A-Za-z ]+$`},
		{`company()`, `^[A-Z][A-Za-z]+ ([A-Z][A-Za-z]+|and [A-Z][A-Za-z]+)$`},
		{`street()`, `^[0-9]{1,4} [A-Z][A-Za-z]+ [A-Z][a-z]+$`},
		{`firstName()`, `^[A-Z][a-z]+$`},
		{`lastName()`, `^[A-Z][A-Za-z]+$`},
		{`surname()`, `^[A-Z][A-Za-z]+$`},
		{`username()`, `^[a-z][a-z]+$`},
		{`email()`, `^[a-z]+\.[a-z]+@(mail\.)?example\.(com|net|org)$`},
		{`email("acme.test")`, `^[a-z]+\.[a-z]+@acme\.test$`},
		{`ipv4()`, `^([0-9]{1,3}\.){3}[0-9]{1,3}$`},
		{`ipv6()`, `^([0-9a-f]{4}:){7}[0-9a-f]{4}$`},
		{`ipv6("upper")`, `^([0-9A-F]{4}:){7}[0-9A-F]{4}$`},
		{`ipv6("lower")`, `^([0-9a-f]{4}:){7}[0-9a-f]{4}$`},
		{`concat("A", 'B', integer(1, 1), "\"")`, `^AB1"$`},
		{`substring("long word", 1, 6)`, `^ong w$`},
		{`substring("word", 3)`, `^d$`},
		{`substring("word", 2, 99)`, `^rd$`},
		{`random("red", "yellow", green)`, `^(red|yellow|green)$`},
		{`alpha()`, `^[a-zA-Z]{10,20}$`},
		{`alpha(4)`, `^[a-zA-Z]{4}$`},
		{`alpha(2, 3)`, `^[a-zA-Z]{2,3}$`},
		{`alphaNumeric()`, `^[a-zA-Z0-9]{10,20}$`},
		{`alphaNumeric(6)`, `^[a-zA-Z0-9]{6}$`},
		{`toLowerCase("RED")`, `^red$`},
		{`toUpperCase(substring(gender(), 0, 1))`, `^[MF]$`},
		{`put("k", "v")`, `^v$`},
		{`concat(put("k", integer(1, 9)), "=", get("k"))`, `^([1-9])=([1-9])$`},
		{`date()`, `^Mon, 6 May 2024 07:08:09 UTC$`},
		{`date("yyyy-MM-dd'T'HH:mm:ss.SSSXXX")`, `^2024-05-06T07:08:09\.123Z$`},
		{`date("06-01-2020 00:00:00", "08-01-2020 00:00:00", "dd/MM/yy")`, `^0[678]/01/20$`},
		{`date("Mon, 6 Jan 2020 00:00:00 UTC", "Mon, 6 Jan 2020 23:00:00 UTC")`, `^Mon, 6 Jan 2020 [0-2][0-9]:[0-5][0-9]:[0-5][0-9] UTC$`},
		{`dateFormat("06-16-1956 12:00:00", "MM-dd-yyyy HH:mm:ss", "yyyy/MM/dd")`, `^1956/06/16$`},
		{`timestamp()`, `^1714979289123$`},
		{`timestamp("Mon, 6 Jan 2020 00:00:00 UTC", "Mon, 6 Jan 2020 00:00:01 UTC")`, `^157826880[01][0-9]{3}$`},
		{`timestampSeconds()`, `^1714979289$`},
		{`addDays("03-11-2018 09:27:56", 12)`, `^15-11-2018 09:27:56$`},
		{`addDays("yyyy-MM-dd", "2018-11-03", -3)`, `^2018-10-31$`},
		{`addWeeks("03-11-2018 09:27:56", 1)`, `^10-11-2018 09:27:56$`},
		{`addMonths("03-11-2018 09:27:56", 2)`, `^03-01-2019 09:27:56$`},
		{`addYears("03-11-2018 09:27:56", -1)`, `^03-11-2017 09:27:56$`},
		{`addHours("03-11-2018 09:27:56", 15)`, `^04-11-2018 00:27:56$`},
		{`addMinutes("03-11-2018 09:27:56", 33)`, `^03-11-2018 10:00:56$`},
		{`addSeconds("03-11-2018 09:27:56", 4)`, `^03-11-2018 09:28:00$`},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		re := regexp.MustCompile(c.want)
		tmpl, err := Parse("{{" + c.call + "}}")
		if err != nil {
			t.Errorf("%s: %v", c.call, err)
			continue
		}
		for _, f := range regexp.MustCompile(`[a-zA-Z0-9]+\(`).FindAllString(c.call, -1) {
			covered[strings.TrimSuffix(f, "(")] = true
		}
		r := tmpl.NewRenderer(42)
		for i := range 200 {
			out, err := r.Render(nil, 7, at)
			if err != nil || !re.MatchString(string(out)) {
				t.Errorf("%s: message %d rendered %q, %v; want %s", c.call, i, out, err, c.want)
				break
			}
			if i == 0 && c.call == `concat(put("k", integer(1, 9)), "=", get("k"))` {
				m := re.FindStringSubmatch(string(out))
				if m[1] != m[2] {
					t.Errorf("get returned %s after put of %s", m[2], m[1])
				}
			}
			r = tmpl.NewRenderer(uint64(i)) // another seed: another value
		}
	}
	for _, name := range functionNames() {
		if !covered[name] {
			t.Errorf("function %s() is not tested", name)
		}
	}
}

// TestParseErrors: every problem has the template's line and column, and all are reported.
func TestGeneratorParseErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{`{{uuidd()}}`, `1:3: unknown function "uuidd" (did you mean "uuid"?)`},
		{`{{integer(1)}}`, `1:3: integer() takes 2 arguments, not 1`},
		{`{{uuid(1, 2)}}`, `1:3: uuid() takes 0 to 1 argument, not 2`},
		{`{{phone(1)}}`, `1:3: phone() takes no arguments, not 1`},
		{`{{random()}}`, `1:3: random() takes at least 1 argument, not 0`},
		{`{{integer(5, 1)}}`, `1:11: integer(): the minimum 5 is greater than the maximum 1`},
		{"{\n  \"n\": {{integer(x, 1)}}\n}", `2:18: integer(): "x" is not a whole number`},
		{`{{double(0, "inf")}}`, `1:13: double(): "inf" is not a finite number`},
		{`{{double(0, 1, "%d")}}`, `1:16: double(): format "%d" must hold one number verb such as %.2f`},
		{`{{double(0, 1, toLowerCase("%F"))}}`, `1:16: double(): the format must be written out, not computed by toLowerCase()`},
		{`{{bool(2)}}`, `1:8: bool(): the probability 2 must be between 0 and 1`},
		{`{{uuid("maybe")}}`, `1:8: uuid(): the argument must be "true" or "false" (dashes or not), not "maybe"`},
		{`{{hex(100000)}}`, `1:7: hex(): 100000 is out of range: it must be 0 to 65536`},
		{`{{alpha(5, 2)}}`, `1:9: alpha(): the minimum 5 is greater than the maximum 2`},
		{`{{lorem(3, "lines")}}`, `1:12: lorem(): the unit must be "words" or "paragraphs", not "lines"`},
		{`{{ipv6("mixed")}}`, `1:8: ipv6(): the case must be "lower" or "upper", not "mixed"`},
		{`{{timestamp("Mon, 6 Jan 2020 00:00:00 UTC")}}`, `1:3: timestamp() takes no arguments or two dates (begin, end), not 1`},
		{`{{date("2020-01-01", "2020-02-01")}}`, `1:8: date(): "2020-01-01" is not a date in the format "EEE, d MMM yyyy HH:mm:ss z"`},
		{`{{date("yyyy-QQ")}}`, `1:8: date(): date format letter "Q" is not supported (supported: y M L d H h m s S E a z Z X D)`},
		{`{{date("yyyy 'Jan'")}}`, `1:8: date(): date format: literal text "Jan" is not supported`},
		{`{{date("'unterminated")}}`, `1:8: date(): date format "'unterminated": unterminated quoted text`},
		{`{{date("ss:SSS")}}`, `1:8: date(): date format: fractions of a second (S) must follow a '.' or ',' and have at most 9 digits`},
		{`{{addDays("03-11-2018", 1)}}`, `1:11: addDays(): "03-11-2018" is not a date in the format "dd-MM-yyyy HH:mm:ss"`},
		{`{{get("k")}}`, `1:3: get("k") has no put("k", ...) before it`},
		{`{{repeat(3)}}`, `1:3: repeat() is not supported: sluice renders one message per template, so arrays have the shape the template writes`},
		{`{{"x"}}`, `1:1: a placeholder holds a function call, such as {{uuid()}}, not the literal "x"`},
		{`{{uuid()`, `1:9: expected }} to close the placeholder opened at 1:1, found the end of the template`},
		{`{{uuid() x}}`, `1:10: expected }} to close the placeholder opened at 1:1, found 'x'`},
		{`{{random("a" "b")}}`, `1:14: expected , or ) in the arguments of random(), found '"'`},
		{`{{random("a)}}`, `1:10: unterminated string: no closing "`},
		{`{{}}`, `1:3: expected a function call, a quoted string or a number, found '}'`},
		{`{{`, `1:3: expected a function call, found the end of the template`},
		{"é {{uuidd()}}", `1:5: unknown function "uuidd" (did you mean "uuid"?)`},
		{`{"a": {{nope()}}, "b": {{integer(2, 1)}}}`, `1:9: unknown function "nope"; 1:34: integer(): the minimum 2 is greater than the maximum 1`},
	}
	for _, c := range cases {
		_, err := Parse(c.src)
		var errs TemplateErrors
		if !errors.As(err, &errs) || err.Error() != c.want {
			t.Errorf("Parse(%q):\n got %v\nwant %s", c.src, err, c.want)
		}
	}
}

// A placeholder inside a JSON string is escaped, so the message stays JSON whatever the
// function renders; outside strings the output stands as it is.
func TestGeneratorJSONEscaping(t *testing.T) {
	out := render(t, `{"s": "<{{concat("say \"hi\"", "\n", "back\\slash", "\t")}}>", "n": {{integer(1, 1)}}, "q": "\"{{integer(2, 2)}}"}`, 1, 0, at)
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	want := map[string]any{"s": "<say \"hi\"\nback\\slash\t>", "n": 1.0, "q": `"2`}
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("got %#v\nwant %#v", v, want)
	}
}

// Messages are a function of (seed, index): rendering again, in any order, on any renderer,
// gives the same text; another seed or index gives another.
func TestGeneratorDeterminism(t *testing.T) {
	tmpl, err := Parse(Templates["GAME_EVENT"])
	if err != nil {
		t.Fatal(err)
	}
	first := map[int64]string{}
	r := tmpl.NewRenderer(9)
	for i := range int64(50) {
		out, _ := r.Render(nil, i, at)
		first[i] = string(out)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			r := tmpl.NewRenderer(9)
			for i := int64(49); i >= 0; i-- {
				if out, _ := r.Render(nil, i, at); string(out) != first[i] {
					t.Errorf("goroutine %d: message %d differs on a second rendering", g, i)
				}
			}
		})
	}
	wg.Wait()
	other, _ := tmpl.NewRenderer(10).Render(nil, 0, at)
	if string(other) == first[0] || first[0] == first[1] {
		t.Error("another seed or index rendered the same message")
	}
}

// TestGolden pins the stream of a seed: a restarted pipeline (or one on a newer sluice)
// regenerates exactly what an earlier run generated. Changing a word list or a function's use
// of randomness breaks it; that is a change of every seeded stream, to be made deliberately.
func TestGeneratorGolden(t *testing.T) {
	want := []string{
		`{"eventId":"4914e5f8-8856-4fcc-9256-1b448630b143","eventTimestamp":1714979289123,"ipv4":"210.13.121.181","ipv6":"b152:385c:5176:fc8f:71dc:c059:b9b3:4247","country":"Mexico","username":"lfernandez","quest":"Survive the Low Road","score":7262,"completed":false}`,
		`{"eventId":"38a20f18-a5b5-4c6b-af95-ec3431999c38","eventTimestamp":1714979289123,"ipv4":"41.121.18.238","ipv6":"9789:9cb7:cf63:9973:0cec:d573:ab19:6f38","country":"Montenegro","username":"jharris","quest":"Ghosts of Perdition","score":7778,"completed":true}`,
	}
	tmpl, err := Parse(Templates["GAME_EVENT"])
	if err != nil {
		t.Fatal(err)
	}
	r := tmpl.NewRenderer(2024)
	for i, w := range want {
		out, _ := r.Render(nil, int64(i), at)
		var compact bytes.Buffer
		if err := json.Compact(&compact, out); err != nil {
			t.Fatal(err)
		}
		if compact.String() != w {
			t.Errorf("seed 2024 message %d:\n got %s\nwant %s", i, compact.String(), w)
		}
	}
}

func TestGeneratorGoLayout(t *testing.T) {
	cases := map[string]string{
		defaultDateFormat:              "Mon, 2 Jan 2006 15:04:05 MST",
		defaultInputFormat:             "02-01-2006 15:04:05",
		"yyyy-MM-dd'T'HH:mm:ss.SSSXXX": "2006-01-02T15:04:05.000Z07:00",
		"EEEE d MMMM yy, h:mm a":       "Monday 2 January 06, 3:04 PM",
		"yyyyDDD Z":                    "2006002 -0700",
		"HH 'o''clock'":                "15 o'clock",
	}
	for pattern, want := range cases {
		if got, err := goLayout(pattern); err != nil || got != want {
			t.Errorf("goLayout(%q) = %q, %v; want %q", pattern, got, err, want)
		}
	}
}

// Every function is described in docs/generator.md, and the schema_template enum lists the
// built-in templates, each of which renders a JSON object.
func TestGeneratorDocsAndBuiltins(t *testing.T) {
	doc, err := os.ReadFile("../../docs/generator.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range functionNames() {
		if !strings.Contains(string(doc), name+"(") {
			t.Errorf("docs/generator.md does not describe %s()", name)
		}
	}
	field, _ := reflect.TypeFor[Config]().FieldByName("SchemaTemplate")
	enum := strings.Split(field.Tag.Get("enum"), ",")
	var names []string
	for name, text := range Templates {
		names = append(names, name)
		var v map[string]any
		if err := json.Unmarshal([]byte(render(t, text, 1, 0, at)), &v); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if !strings.Contains(string(doc), name) {
			t.Errorf("docs/generator.md does not describe %s", name)
		}
	}
	slices.Sort(names)
	if !slices.Equal(enum, names) {
		t.Errorf("schema_template's enum is %v; the built-in templates are %v", enum, names)
	}
}
