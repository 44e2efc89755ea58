package hpm

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// CPU is what decides the call-counting event: the vendor's family and
// model pick the pmu-events table, and the core PMUs the kernel registered
// say whether there is a PMU at all and how many (hybrid parts have one per
// core type).
type CPU struct {
	Arch                    string // GOARCH spelling: "amd64", "arm64", ...
	Vendor                  string // x86 vendor_id; on arm64 the implementer's name
	Family, Model, Stepping int    // arm64: architecture, part number, revision
	ModelName               string
	// Hybrid: more than one kind of core. On x86 only the PMUs tell
	// (cpu_core + cpu_atom): /proc/cpuinfo hides the hybrid_cpu flag.
	Hybrid bool
	// CorePMUs are the core PMUs under /sys/bus/event_source/devices, in
	// the order events should be listed (performance cores first). Empty
	// where the kernel found no PMU, as in most VMs.
	CorePMUs []string
}

const eventSourceDir = "/sys/bus/event_source/devices"

// DetectCPU describes the CPU this process runs on. It never fails: what it
// cannot read stays zero, and CallEvents then says why there is no counter.
func DetectCPU() CPU {
	text, _ := os.ReadFile("/proc/cpuinfo")
	cpu := ParseCPUInfo(string(text), runtime.GOARCH)
	cpu.CorePMUs = corePMUs(eventSourceDir)
	if len(cpu.CorePMUs) > 1 {
		cpu.Hybrid = true
	}
	return cpu
}

// corePMUs lists the PMUs that count events of the CPU cores themselves, as
// opposed to uncore, software, tracepoint or uprobe PMUs.
func corePMUs(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var pmus []string
	for _, e := range ents {
		if isCorePMU(e.Name()) {
			pmus = append(pmus, e.Name())
		}
	}
	slices.SortFunc(pmus, func(a, b string) int { return pmuRank(a) - pmuRank(b) })
	return pmus
}

// x86 core PMUs: "cpu" on ordinary parts; one per core type on hybrids.
// Arm's PMUv3 driver names its PMUs armv8_*/armv9_* (armv8_pmuv3_0 under
// ACPI, armv8_cortex_a72 and the like under devicetree). Other Arm PMUs,
// such as Apple's, do not implement the architectural events and are left
// out on purpose.
func isCorePMU(name string) bool {
	switch name {
	case "cpu", "cpu_core", "cpu_atom", "cpu_lowpower":
		return true
	}
	return strings.HasPrefix(name, "armv8_") || strings.HasPrefix(name, "armv9_")
}

func pmuRank(name string) int {
	switch name {
	case "cpu", "cpu_core":
		return 0
	case "cpu_atom":
		return 1
	case "cpu_lowpower":
		return 2
	}
	return 3
}

// PMUType reads the perf_event_attr.type of a PMU from sysfs. Dynamic PMUs
// (cpu_atom, armv8_*) have no fixed number, so this is the only way to
// address them.
func PMUType(pmu string) (uint32, error) {
	b, err := os.ReadFile(filepath.Join(eventSourceDir, pmu, "type"))
	if err != nil {
		return 0, err
	}
	t, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("PMU %s: type %q: %v", pmu, b, err)
	}
	return uint32(t), nil
}

// ParseCPUInfo reads /proc/cpuinfo text. arch is a GOARCH ("amd64",
// "arm64"); uname spellings ("x86_64", "aarch64") are accepted too. x86
// fields come from the first processor block; arm64 has no model name, so
// the implementer and part numbers are translated, and differing parts
// across processors (big.LITTLE) mark the CPU hybrid.
func ParseCPUInfo(text, arch string) CPU {
	cpu := CPU{Arch: normArch(arch)}
	type armCore struct{ impl, part int64 }
	var cores []armCore
	var cur armCore
	haveCur := false
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	blocks := 0
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if key == "processor" {
			blocks++
			if haveCur {
				cores = append(cores, cur)
			}
			cur, haveCur = armCore{}, false
			continue
		}
		first := blocks <= 1
		switch key {
		case "vendor_id":
			if first {
				cpu.Vendor = val
			}
		case "cpu family":
			if first {
				cpu.Family = atoi(val)
			}
		case "model":
			if first {
				cpu.Model = atoi(val)
			}
		case "stepping":
			if first {
				cpu.Stepping = atoi(val)
			}
		case "model name":
			if first && cpu.ModelName == "" {
				cpu.ModelName = val
			}
		case "CPU implementer":
			cur.impl, haveCur = parseInt(val), true
			if first {
				cpu.Vendor = armImplementer(cur.impl)
			}
		case "CPU architecture":
			if first {
				cpu.Family = atoi(val)
			}
		case "CPU part":
			cur.part, haveCur = parseInt(val), true
			if first {
				cpu.Model = int(cur.part)
			}
		case "CPU revision":
			if first {
				cpu.Stepping = atoi(val)
			}
		}
	}
	if haveCur {
		cores = append(cores, cur)
	}
	if cpu.Arch == "arm64" && len(cores) > 0 {
		first := cores[0]
		if name := armPartName(first.impl, first.part); name != "" {
			cpu.ModelName = name
		}
		for _, c := range cores[1:] {
			if c != first {
				cpu.Hybrid = true
			}
		}
	}
	return cpu
}

func normArch(a string) string {
	switch a {
	case "x86_64":
		return "amd64"
	case "aarch64":
		return "arm64"
	case "i386", "i686":
		return "386"
	}
	return a
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// parseInt reads the 0x-prefixed numbers arm64 prints.
func parseInt(s string) int64 {
	n, _ := strconv.ParseInt(s, 0, 64)
	return n
}

// The Implementer field of MIDR_EL1, as the kernel prints it.
func armImplementer(impl int64) string {
	switch impl {
	case 0x41:
		return "ARM"
	case 0x42:
		return "Broadcom"
	case 0x43:
		return "Cavium"
	case 0x46:
		return "Fujitsu"
	case 0x48:
		return "HiSilicon"
	case 0x4e:
		return "NVIDIA"
	case 0x50:
		return "APM"
	case 0x51:
		return "Qualcomm"
	case 0x61:
		return "Apple"
	case 0x6d:
		return "Microsoft"
	case 0xc0:
		return "Ampere"
	}
	return fmt.Sprintf("implementer %#x", impl)
}

// Only the parts people profile servers and boards on; an unknown part
// keeps an empty model name, which costs nothing: the call event on arm64 is
// architectural and does not depend on the part.
func armPartName(impl, part int64) string {
	if impl == 0xc0 && part == 0xac3 {
		return "AmpereOne"
	}
	if impl != 0x41 {
		return ""
	}
	switch part {
	case 0xd03:
		return "Cortex-A53"
	case 0xd05:
		return "Cortex-A55"
	case 0xd07:
		return "Cortex-A57"
	case 0xd08:
		return "Cortex-A72"
	case 0xd0b:
		return "Cortex-A76"
	case 0xd0c:
		return "Neoverse-N1"
	case 0xd40:
		return "Neoverse-V1"
	case 0xd49:
		return "Neoverse-N2"
	case 0xd4f:
		return "Neoverse-V2"
	case 0xd84:
		return "Neoverse-V3"
	case 0xd8e:
		return "Neoverse-N3"
	}
	return ""
}
