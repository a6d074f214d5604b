package sql

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/schemas"
)

// The functions of Calcite's MySQL and BigQuery libraries that Beam's examples use (with
// options.calcite_connection_properties fun: mysql or bigquery; sluice has them always), where
// each means one thing: DATEDIFF, DATE_FORMAT and SUBSTRING_INDEX of MySQL, FORMAT_TIMESTAMP
// and PARSE_TIMESTAMP of BigQuery. COUNTIF is an aggregate (group.go).
func init() {
	functions["datediff"] = function{min: 2, max: 2, result: sameAs(tInt, isTimeLike), call: func(a []any) (any, error) {
		x, err := timeOf(a[0])
		if err != nil {
			return nil, err
		}
		y, err := timeOf(a[1])
		if err != nil {
			return nil, err
		}
		return days(x) - days(y), nil
	}}
	functions["date_format"] = function{min: 2, max: 2, result: sameAs(tString, isTimeLike, isString), call: func(a []any) (any, error) {
		t, err := timeOf(a[0])
		if err != nil {
			return nil, err
		}
		return formatTime(t, str(a[1]), mysqlFormat)
	}}
	functions["format_timestamp"] = function{min: 2, max: 2, result: sameAs(tString, isString, isTime), call: func(a []any) (any, error) {
		return formatTime(a[1].(time.Time), str(a[0]), strftimeFormat)
	}}
	functions["parse_timestamp"] = function{min: 2, max: 2, result: sameAs(tTime, isString, isString), call: func(a []any) (any, error) {
		return parseTime(str(a[0]), str(a[1]))
	}}
	functions["substring_index"] = function{min: 3, max: 3, result: sameAs(tString, isString, isString, isInt), call: func(a []any) (any, error) {
		return substringIndex(str(a[0]), str(a[1]), a[2].(int64)), nil
	}}
}

// isTimeLike is a TIMESTAMP, or a VARCHAR that CAST reads as one ('2024-01-15',
// '2024-01-15 10:30:00'), as Calcite coerces the strings of MySQL's date functions.
func isTimeLike(t schemas.Type) bool { return isTime(t) || isString(t) }

func timeOf(v any) (time.Time, error) {
	t, err := castValue(v, schemas.Timestamp)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s is %w", schemas.Describe(v), err)
	}
	return t.(time.Time), nil
}

// days is the number of the day of t since the epoch, in UTC.
func days(t time.Time) int64 {
	return int64(time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

// substringIndex is MySQL's SUBSTRING_INDEX: s before the n-th delimiter, or with a negative
// n after the n-th from the end.
func substringIndex(s, delim string, n int64) string {
	if n == 0 || delim == "" {
		return ""
	}
	parts := strings.Split(s, delim)
	if n > 0 {
		return strings.Join(parts[:min(int(n), len(parts))], delim)
	}
	return strings.Join(parts[max(len(parts)+int(n), 0):], delim)
}

// timeFormat maps a format's % letters to how the letter prints a time: a Go layout, or a
// function for what has none.
type timeFormat map[byte]any

// mysqlFormat is MySQL's DATE_FORMAT.
var mysqlFormat = timeFormat{
	'Y': "2006", 'y': "06", 'm': "01", 'c': func(t time.Time) string { return strconv.Itoa(int(t.Month())) },
	'd': "02", 'e': func(t time.Time) string { return strconv.Itoa(t.Day()) }, 'H': "15",
	'k': func(t time.Time) string { return strconv.Itoa(t.Hour()) }, 'h': "03", 'I': "03",
	'l': func(t time.Time) string { return t.Format("3") }, 'i': "04", 's': "05", 'S': "05",
	'f': ".000000", 'p': "PM", 'M': "January", 'b': "Jan", 'W': "Monday", 'a': "Mon", 'j': "002",
	'T': "15:04:05", 'r': "03:04:05 PM",
}

// strftimeFormat is BigQuery's FORMAT_TIMESTAMP and PARSE_TIMESTAMP (C's strftime).
var strftimeFormat = timeFormat{
	'Y': "2006", 'y': "06", 'm': "01", 'd': "02", 'e': "_2", 'H': "15", 'I': "03", 'M': "04",
	'S': "05", 'p': "PM", 'B': "January", 'b': "Jan", 'h': "Jan", 'A': "Monday", 'a': "Mon",
	'j': "002", 'F': "2006-01-02", 'T': "15:04:05", 'D': "01/02/06", 'R': "15:04", 'z': "-0700",
	'Z': "MST",
}

// formatTime prints t (in UTC) by format, a text with % letters of f.
func formatTime(t time.Time, format string, f timeFormat) (any, error) {
	t = t.UTC()
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			b.WriteByte(format[i])
			continue
		}
		i++
		if i == len(format) {
			return nil, fmt.Errorf("the format %q ends with %%", format)
		}
		switch p := f[format[i]].(type) {
		case string:
			s := t.Format(p)
			if format[i] == 'f' {
				s = s[1:]
			}
			b.WriteString(s)
		case func(time.Time) string:
			b.WriteString(p(t))
		default:
			if format[i] != '%' {
				return nil, fmt.Errorf("%%%c is not a format element sluice knows", format[i])
			}
			b.WriteByte('%')
		}
	}
	return b.String(), nil
}

// parseTime reads s by a strftime format, through the Go layout the format spells; text
// outside the % elements must be in s as it is.
func parseTime(format, s string) (any, error) {
	var layout strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			if c >= '0' && c <= '9' {
				return nil, fmt.Errorf("the format %q holds digits outside its %% elements, which sluice cannot parse by", format)
			}
			layout.WriteByte(c)
			continue
		}
		i++
		if i == len(format) {
			return nil, fmt.Errorf("the format %q ends with %%", format)
		}
		p, ok := strftimeFormat[format[i]].(string)
		switch {
		case ok:
			layout.WriteString(p)
		case format[i] == '%':
			layout.WriteByte('%')
		default:
			return nil, fmt.Errorf("%%%c is not a format element sluice parses by", format[i])
		}
	}
	t, err := time.Parse(layout.String(), s)
	if err != nil {
		return nil, fmt.Errorf("%s does not match the format %q", schemas.Describe(s), format)
	}
	return t.UTC(), nil
}

// months is an INTERVAL in MONTH or YEAR: a number of calendar months, whose length varies.
type months int64

// addMonths adds n calendar months to t, the day clamped to the end of a shorter month
// (January 31 plus one month is February's last day), as Calcite does.
func addMonths(t time.Time, n months) time.Time {
	y, m, d := t.Date()
	first := time.Date(y, m+time.Month(n), 1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location())
	last := first.AddDate(0, 1, -1).Day()
	return first.AddDate(0, 0, min(d, last)-1)
}

// shift adds (sign 1) or subtracts (-1) an INTERVAL's value to t.
func shift(t time.Time, interval any, sign int) time.Time {
	if n, ok := interval.(months); ok {
		return addMonths(t, months(sign)*n)
	}
	return t.Add(time.Duration(sign) * interval.(time.Duration))
}
