package main

import (
	"bytes"
	"strings"
	"testing"
)

// sluice version says what the release build stamped (-X main.version=... main.commit
// main.date: deploy/ checks it on a binary built so), and without stamps what Go recorded.
func TestVersionStamp(t *testing.T) {
	versionOf := func() string {
		var out, errOut bytes.Buffer
		if code := Main([]string{"version"}, &out, &errOut); code != exitOK || errOut.Len() > 0 {
			t.Fatalf("sluice version: exit %d, stderr %q", code, errOut.String())
		}
		return out.String()
	}
	if got := versionOf(); !strings.HasPrefix(got, "sluice (devel)") && !strings.HasPrefix(got, "sluice v") {
		t.Errorf("unstamped: %q, want the module version or (devel)", got)
	}
	defer func(v, c, d string) { version, commit, date = v, c, d }(version, commit, date)
	version, commit, date = "v1.2.3", "0123456789ab", "2026-01-02T03:04:05Z"
	if got, want := versionOf(), "sluice v1.2.3 commit 0123456789ab built 2026-01-02T03:04:05Z\n"; got != want {
		t.Errorf("stamped: %q, want %q", got, want)
	}
	var out bytes.Buffer
	if code := Main([]string{"--version"}, &out, &bytes.Buffer{}); code != exitOK || !strings.Contains(out.String(), "v1.2.3 commit") {
		t.Errorf("sluice --version: exit %d, %q", code, out.String())
	}
}
