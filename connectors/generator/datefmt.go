package generator

import (
	"fmt"
	"strings"
)

// The date formats of the JSON Data Generator's date functions, in Java's SimpleDateFormat
// notation: what date() prints and what date(begin, end) and timestamp(begin, end) read, and
// what date(begin, end, format), dateFormat and the add functions read by default.
const (
	defaultDateFormat  = "EEE, d MMM yyyy HH:mm:ss z"
	defaultInputFormat = "dd-MM-yyyy HH:mm:ss"
)

// goLayout translates a Java SimpleDateFormat pattern into a Go time layout. It knows the
// letters y M L d H h m s S E a z Z X D and quoted literals ('T', ” for a quote), and refuses
// literal text that Go would read as part of a layout (digits, "Jan", "Mon", "PM", ...).
func goLayout(pattern string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch {
		case c == '\'':
			text, end, err := quotedLiteral(pattern, i)
			if err != nil {
				return "", err
			}
			if err := literalText(&b, text); err != nil {
				return "", err
			}
			i = end
		case c|0x20 >= 'a' && c|0x20 <= 'z':
			n := 1
			for i+n < len(pattern) && pattern[i+n] == c {
				n++
			}
			tok, err := layoutToken(c, n, b.String())
			if err != nil {
				return "", err
			}
			b.WriteString(tok)
			i += n
		default:
			if err := literalText(&b, string(c)); err != nil {
				return "", err
			}
			i++
		}
	}
	return b.String(), nil
}

// quotedLiteral reads the quoted text that starts with the quote at pattern[i].
func quotedLiteral(pattern string, i int) (string, int, error) {
	if i+1 < len(pattern) && pattern[i+1] == '\'' {
		return "'", i + 2, nil
	}
	var text strings.Builder
	for j := i + 1; j < len(pattern); j++ {
		if pattern[j] != '\'' {
			text.WriteByte(pattern[j])
			continue
		}
		if j+1 < len(pattern) && pattern[j+1] == '\'' {
			text.WriteByte('\'')
			j++
			continue
		}
		return text.String(), j + 1, nil
	}
	return "", 0, fmt.Errorf("date format %q: unterminated quoted text", pattern)
}

// goLayoutWords are what Go's time layouts read as elements, so literal text cannot hold them.
var goLayoutWords = []string{"Jan", "Mon", "MST", "PM", "pm", "_"}

func literalText(b *strings.Builder, text string) error {
	if strings.ContainsAny(text, "0123456789") {
		return fmt.Errorf("date format: literal text %q with digits is not supported", text)
	}
	for _, w := range goLayoutWords {
		if strings.Contains(text, w) {
			return fmt.Errorf("date format: literal text %q is not supported", text)
		}
	}
	b.WriteString(text)
	return nil
}

// layoutToken returns the Go layout element for n repetitions of the pattern letter c; before
// is the layout so far.
func layoutToken(c byte, n int, before string) (string, error) {
	pick := func(short, long string, longFrom int) string {
		if n >= longFrom {
			return long
		}
		return short
	}
	switch c {
	case 'y':
		if n == 2 {
			return "06", nil
		}
		return "2006", nil
	case 'M', 'L':
		return [...]string{"1", "01", "Jan", "January"}[min(n, 4)-1], nil
	case 'd':
		return pick("2", "02", 2), nil
	case 'H':
		return "15", nil
	case 'h':
		return pick("3", "03", 2), nil
	case 'm':
		return pick("4", "04", 2), nil
	case 's':
		return pick("5", "05", 2), nil
	case 'S':
		if !strings.HasSuffix(before, ".") && !strings.HasSuffix(before, ",") || n > 9 {
			return "", fmt.Errorf("date format: fractions of a second (S) must follow a '.' or ',' and have at most 9 digits")
		}
		return strings.Repeat("0", n), nil
	case 'E':
		return pick("Mon", "Monday", 4), nil
	case 'a':
		return "PM", nil
	case 'z':
		return "MST", nil
	case 'Z':
		return "-0700", nil
	case 'X':
		return [...]string{"Z07", "Z0700", "Z07:00"}[min(n, 3)-1], nil
	case 'D':
		return "002", nil
	}
	return "", fmt.Errorf("date format letter %q is not supported (supported: y M L d H h m s S E a z Z X D)", string(c))
}
