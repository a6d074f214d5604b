package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// machineSample is what the machine and the processes beside sluice had used at one moment,
// so that a latency run can say how busy the machine was while it measured: on 2 vCPUs the
// broker and the harness's own producer and consumer compete with sluice, and a run that
// saturates the machine measures the queue, not sluice.
type machineSample struct {
	busy, total float64 // /proc/stat: CPU seconds of all cores, busy and in all
	broker      float64 // CPU seconds of the `sluice dev kafka` process
	harness     float64 // CPU seconds of this process
}

// clockTick is USER_HZ, the unit of /proc's CPU times: 100 on every Linux architecture Go
// supports here.
const clockTick = 100

func sampleMachine(brokerPid int) machineSample {
	var s machineSample
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		for i, f := range strings.Fields(line)[1:] {
			v, _ := strconv.ParseFloat(f, 64)
			s.total += v / clockTick
			if i != 3 && i != 4 { // idle and iowait
				s.busy += v / clockTick
			}
		}
	}
	if brokerPid > 0 {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(brokerPid) + "/stat"); err == nil {
			// The command may hold spaces: the fields after it start past the last ')'.
			f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
			if len(f) > 12 {
				u, _ := strconv.ParseFloat(f[11], 64)
				st, _ := strconv.ParseFloat(f[12], 64)
				s.broker = (u + st) / clockTick
			}
		}
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		s.harness = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	}
	return s
}

// machineLoad is what happened between two samples: the share of the machine's CPU that was
// busy, and the CPU seconds the broker and the harness used.
type machineLoad struct {
	Busy       float64 `json:"machine_busy"` // 0..1 of all cores
	BrokerCPU  float64 `json:"broker_cpu_s"`
	HarnessCPU float64 `json:"harness_cpu_s"`
}

func (s machineSample) since(before machineSample) machineLoad {
	var l machineLoad
	if d := s.total - before.total; d > 0 {
		l.Busy = (s.busy - before.busy) / d
	}
	l.BrokerCPU, l.HarnessCPU = s.broker-before.broker, s.harness-before.harness
	return l
}
