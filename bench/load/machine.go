package load

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// MachineTicks is the machine's CPU time so far, all CPUs, in clock ticks,
// from the first line of /proc/stat: the total of every state and the part
// stolen by the hypervisor (time a virtual CPU was ready to run and the host
// ran something else).
type MachineTicks struct {
	Total, Steal uint64
}

// ReadMachineTicks reads /proc/stat (Linux only).
func ReadMachineTicks() (MachineTicks, error) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return MachineTicks{}, fmt.Errorf("cannot read machine CPU time: %w", err)
	}
	return parseProcStat(raw)
}

// StealSince is the share of the machine's CPU time stolen between earlier
// and t, in [0, 1]: 0 when no tick passed or a counter went back (the
// kernel lets iowait decrease), 1 at most when steal jumped past the total
// (a live migration). It is the share of all CPUs, idle ones included.
func (t MachineTicks) StealSince(earlier MachineTicks) float64 {
	if t.Total <= earlier.Total || t.Steal < earlier.Steal {
		return 0
	}
	return min(float64(t.Steal-earlier.Steal)/float64(t.Total-earlier.Total), 1)
}

var errMalformedProcStat = errors.New("malformed /proc/stat")

// parseProcStat reads "cpu  user nice system idle iowait irq softirq steal
// guest guest_nice": steal is the eighth number. Guest time is already
// counted in user and nice, so it is left out of the total.
func parseProcStat(stat []byte) (MachineTicks, error) {
	line, _, _ := bytes.Cut(stat, []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) < 9 || fields[0] != "cpu" {
		return MachineTicks{}, errMalformedProcStat
	}
	var t MachineTicks
	for i, f := range fields[1:9] {
		n, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return MachineTicks{}, errMalformedProcStat
		}
		t.Total += n
		if i == 7 {
			t.Steal = n
		}
	}
	return t, nil
}
