package sampler

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// onlineCPUs parses /sys/devices/system/cpu/online ("0-3,5").
func onlineCPUs() ([]int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil, fmt.Errorf("list CPUs: %w", err)
	}
	return parseCPUList(strings.TrimSpace(string(b)))
}

// ParseCPUList parses a CPU list as the kernel and perf's -C write it
// ("0-3,5"): the CPUs in increasing order, each once.
func ParseCPUList(s string) ([]int, error) {
	cpus, err := parseCPUList(s)
	if err != nil {
		return nil, err
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
}

// CheckCPUs says whether every CPU of cpus is online, as Open will.
func CheckCPUs(cpus []int) error {
	online, err := onlineCPUs()
	if err != nil {
		return err
	}
	_, err = chooseCPUs(online, cpus)
	return err
}

// chooseCPUs is the CPUs of a session: want (Config.CPUs) if each is
// online, else an error naming the first that is not.
func chooseCPUs(online, want []int) ([]int, error) {
	if len(want) == 0 {
		return online, nil
	}
	for _, c := range want {
		if !slices.Contains(online, c) {
			return nil, fmt.Errorf("CPU %d is not online (online: %s)", c, formatCPUList(online))
		}
	}
	return want, nil
}

// formatCPUList writes cpus (increasing) as the kernel does: "0-3,5".
func formatCPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}

func parseCPUList(s string) ([]int, error) {
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		if part == "" {
			continue
		}
		lo, hi, found := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("bad CPU list %q", s)
		}
		b := a
		if found {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("bad CPU list %q", s)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	if len(cpus) == 0 {
		return nil, fmt.Errorf("bad CPU list %q", s)
	}
	return cpus, nil
}
