package confluent

import "testing"

// A URL's user info never reaches a message, also when the URL does not parse.
func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pw@host:8081":         "https://***@host:8081",
		"https://user:pw@host/path":         "https://***@host/path",
		"http://a@b:pw@host/":               "http://***@host/",
		"http://host:8081":                  "http://host:8081",
		"ftp://user:pw@host:x:y":            "ftp://***@host:x:y",
		"user:pw@host:8081":                 "***@host:8081",
		"http://user:p%zz@host/a?b=c":       "http://***@host/a?b=c",
		"https://registry.example.com/ctx/": "https://registry.example.com/ctx/",
	} {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
