package secret

import (
	"os"
	"path/filepath"
	"testing"
)

func TestExpand(t *testing.T) {
	t.Setenv("SECRET_TEST_USER", "alice")
	file := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(file, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, refs, err := Expand("${env:SECRET_TEST_USER}:${file:" + file + "}@host")
	if err != nil || got != "alice:s3cret@host" || len(refs) != 2 || refs[1].Text != "${file:"+file+"}" {
		t.Fatalf("got %q %v %v", got, refs, err)
	}
	if _, _, err := Expand("${env:SECRET_TEST_NOT_SET}"); err == nil || err.Error() != "environment variable SECRET_TEST_NOT_SET is not set" {
		t.Errorf("unset variable: %v", err)
	}
	if _, _, err := Expand("${file:/does/not/exist}"); err == nil || err.Error() != "cannot read the secret file /does/not/exist: no such file or directory" {
		t.Errorf("missing file: %v", err)
	}
}

func TestMask(t *testing.T) {
	var s Set
	s.Add("pass", "<short>")
	s.Add("password123", "<long>")
	s.Add("", "<empty>")
	if got := s.Mask("a password123 and pass"); got != "a <long> and <short>" {
		t.Errorf("Mask: %q (a secret inside another must be masked whole)", got)
	}
	// A short secret is never searched for, and a secret is masked only as a whole word:
	// messages are never garbled.
	var short Set
	short.Add("p", "<secret:password>")
	short.Add("abcd", "<secret:x>")
	for in, want := range map[string]string{
		"type -p abcdef":      "type -p abcdef",
		"key=abcd; xabcd":     "key=<secret:x>; xabcd",
		"user:abcd@host abcd": "user:<secret:x>@host <secret:x>",
	} {
		if got := short.Mask(in); got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
	var nilSet *Set
	if nilSet.Mask("x") != "x" || nilSet.Len() != 0 {
		t.Error("a nil set masks nothing")
	}
}
