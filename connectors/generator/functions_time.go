package generator

import (
	"strconv"
	"time"
)

// Times are in UTC. The message's own time (the "current" time of date() and timestamp()) is
// its generation time, or its place on the synthetic clock of a seeded stream.

func defineTimeFunctions() {
	def(0, 3, dateFn, "date")
	def(3, 3, dateFormatFn, "dateFormat")
	def(0, 2, timestampFn(time.Time.UnixMilli), "timestamp")
	def(0, 2, timestampFn(time.Time.Unix), "timestampSeconds")
	units := []struct {
		name                string
		years, months, days int
		step                time.Duration
	}{
		{name: "addYears", years: 1}, {name: "addMonths", months: 1}, {name: "addWeeks", days: 7},
		{name: "addDays", days: 1}, {name: "addHours", step: time.Hour},
		{name: "addMinutes", step: time.Minute}, {name: "addSeconds", step: time.Second},
	}
	for _, u := range units {
		def(2, 3, addFn(func(t time.Time, n int) time.Time {
			return t.AddDate(n*u.years, n*u.months, n*u.days).Add(time.Duration(n) * u.step)
		}), u.name)
	}
}

type timeArg func(*state) (time.Time, error)

// layoutOf translates a format argument, which must be written out.
func layoutOf(a *arg) (string, error) {
	pattern, err := literal(a, "the date format")
	if err != nil {
		return "", err
	}
	layout, err := goLayout(pattern)
	if err != nil {
		return "", a.errorf("%v", err)
	}
	return layout, nil
}

// timeOf reads a date argument in layout.
func timeOf(a *arg, layout, pattern string) (timeArg, error) {
	parse := func(s string) (time.Time, error) {
		t, err := time.Parse(layout, s)
		if err != nil {
			return t, a.errorf("%q is not a date in the format %q", s, pattern)
		}
		return t.UTC(), nil
	}
	if a.call == nil {
		t, err := parse(a.text)
		if err != nil {
			return nil, err
		}
		return func(*state) (time.Time, error) { return t, nil }, nil
	}
	return func(st *state) (time.Time, error) {
		s, err := a.eval(st)
		if err != nil {
			return time.Time{}, err
		}
		return parse(s)
	}, nil
}

func messageTime(st *state) (time.Time, error) { return st.time.UTC(), nil }

// between returns a time uniformly between two date arguments (inclusive, to the
// millisecond), or the message's time without arguments.
func between(args []*arg, layout, pattern string) (timeArg, error) {
	if len(args) == 0 {
		return messageTime, nil
	}
	lo, err := timeOf(args[0], layout, pattern)
	if err != nil {
		return nil, err
	}
	hi, err := timeOf(args[1], layout, pattern)
	if err != nil {
		return nil, err
	}
	return func(st *state) (time.Time, error) {
		a, err := lo(st)
		if err != nil {
			return a, err
		}
		b, err := hi(st)
		if err != nil {
			return b, err
		}
		if b.Before(a) {
			return a, args[0].errorf("the begin date %s is after the end date %s", a.Format(time.RFC3339), b.Format(time.RFC3339))
		}
		ms := randInt(st.rng, a.UnixMilli(), b.UnixMilli())
		return time.UnixMilli(ms).UTC(), nil
	}, nil
}

// dateFn is date() and date(format) (the message's time), date(begin, end) (a random date
// between them, read and printed in the default format) and date(begin, end, format) (read in
// dd-MM-yyyy HH:mm:ss, printed in format).
func dateFn(c *call) (renderFunc, error) {
	out, _ := goLayout(defaultDateFormat)
	inLayout, inPattern := out, defaultDateFormat
	var err error
	switch len(c.args) {
	case 1:
		if out, err = layoutOf(c.args[0]); err != nil {
			return nil, err
		}
	case 3:
		if out, err = layoutOf(c.args[2]); err != nil {
			return nil, err
		}
		inLayout, _ = goLayout(defaultInputFormat)
		inPattern = defaultInputFormat
	}
	var when timeArg = messageTime
	if len(c.args) >= 2 {
		if when, err = between(c.args[:2], inLayout, inPattern); err != nil {
			return nil, err
		}
	}
	return func(st *state, dst []byte) ([]byte, error) {
		t, err := when(st)
		return t.AppendFormat(dst, out), err
	}, nil
}

// dateFormatFn is dateFormat(date, from, to): date, written in format from, in format to.
func dateFormatFn(c *call) (renderFunc, error) {
	from, err := layoutOf(c.args[1])
	if err != nil {
		return nil, err
	}
	to, err := layoutOf(c.args[2])
	if err != nil {
		return nil, err
	}
	when, err := timeOf(c.args[0], from, c.args[1].text)
	if err != nil {
		return nil, err
	}
	return func(st *state, dst []byte) ([]byte, error) {
		t, err := when(st)
		return t.AppendFormat(dst, to), err
	}, nil
}

// timestampFn is timestamp() (the message's time, in milliseconds since 1970) and
// timestamp(begin, end) (a random time between two dates in the default format), and
// timestampSeconds, the same in seconds.
func timestampFn(unit func(time.Time) int64) func(*call) (renderFunc, error) {
	return func(c *call) (renderFunc, error) {
		if len(c.args) == 1 {
			return nil, c.errorf("%s() takes no arguments or two dates (begin, end), not 1", c.name)
		}
		layout, _ := goLayout(defaultDateFormat)
		when, err := between(c.args, layout, defaultDateFormat)
		if err != nil {
			return nil, err
		}
		return func(st *state, dst []byte) ([]byte, error) {
			t, err := when(st)
			return strconv.AppendInt(dst, unit(t), 10), err
		}, nil
	}
}

// addFn is addDays(date, n) and addDays(format, date, n) and its siblings for other units:
// date moved by n units, in its own format (dd-MM-yyyy HH:mm:ss unless given).
func addFn(add func(time.Time, int) time.Time) func(*call) (renderFunc, error) {
	return func(c *call) (renderFunc, error) {
		args := c.args
		pattern := defaultInputFormat
		layout, _ := goLayout(pattern)
		if len(args) == 3 {
			var err error
			if layout, err = layoutOf(args[0]); err != nil {
				return nil, err
			}
			pattern, args = args[0].text, args[1:]
		}
		when, err := timeOf(args[0], layout, pattern)
		if err != nil {
			return nil, err
		}
		n, err := intOf(args[1])
		if err != nil {
			return nil, err
		}
		return func(st *state, dst []byte) ([]byte, error) {
			t, err := when(st)
			if err != nil {
				return dst, err
			}
			k, err := n(st)
			if err != nil {
				return dst, err
			}
			return add(t, int(k)).AppendFormat(dst, layout), nil
		}, nil
	}
}
