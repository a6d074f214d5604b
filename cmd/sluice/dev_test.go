package main

import (
	"strings"
	"testing"
)

func TestDevKafkaUsage(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"dev"}, "usage: sluice dev kafka"},
		{[]string{"dev", "kafak"}, `unknown service "kafak" (did you mean "kafka"?)`},
		{[]string{"dev", "kafka", "--topic", "events"}, `"events": write NAME:PARTITIONS`},
		{[]string{"dev", "kafka", "--topic", "events:0"}, "the number of partitions must be a whole number of at least 1"},
		{[]string{"dev", "kafka", "--topic", "bad/name:3"}, "a topic name is 1 to 249 letters"},
		{[]string{"dev", "kafka", "--topic", "a:1", "--topic", "a:2"}, `topic "a" is given twice`},
		{[]string{"dev", "kafka", "--listen", "9092"}, `--listen "9092": write HOST:PORT`},
		{[]string{"dev", "kafka", "extra"}, `unexpected argument "extra"`},
		{[]string{"dev", "kafka", "--nope"}, "flag provided but not defined: -nope"},
	}
	for _, c := range cases {
		code, out, errOut := sluice(t, c.args...)
		if code != exitUsage || !strings.Contains(out+errOut, c.want) {
			t.Errorf("sluice %s: exit %d, want %d; output must contain %q:\n%s%s", strings.Join(c.args, " "), code, exitUsage, c.want, out, errOut)
		}
	}
}
