package hpm

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseCPUInfo(t *testing.T) {
	cases := []struct {
		file, arch string
		want       CPU
	}{
		{"cpuinfo-skylakex-xeon-8175m.txt", "amd64", CPU{Arch: "amd64", Vendor: "GenuineIntel",
			Family: 6, Model: 0x55, Stepping: 4, ModelName: "Intel(R) Xeon(R) Platinum 8175M CPU @ 2.50GHz"}},
		// Published with spaces for tabs; the E-core block of a hybrid
		// part reads like any other (the hybrid flag is hidden).
		{"cpuinfo-alderlake-i7-1255u.txt", "x86_64", CPU{Arch: "amd64", Vendor: "GenuineIntel",
			Family: 6, Model: 0x9a, Stepping: 4, ModelName: "12th Gen Intel(R) Core(TM) i7-1255U"}},
		{"cpuinfo-zen2-epyc-7k62.txt", "amd64", CPU{Arch: "amd64", Vendor: "AuthenticAMD",
			Family: 0x17, Model: 0x31, Stepping: 0, ModelName: "AMD EPYC 7K62 48-Core Processor"}},
		{"cpuinfo-zen4-epyc-9r14.txt", "amd64", CPU{Arch: "amd64", Vendor: "AuthenticAMD",
			Family: 0x19, Model: 0x11, Stepping: 1, ModelName: "AMD EPYC 9R14"}},
		{"cpuinfo-neoverse-n1-altra.txt", "aarch64", CPU{Arch: "arm64", Vendor: "ARM",
			Family: 8, Model: 0xd0c, Stepping: 1, ModelName: "Neoverse-N1"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			got := ParseCPUInfo(readTestdata(t, c.file), c.arch)
			if got.Arch != c.want.Arch || got.Vendor != c.want.Vendor || got.Family != c.want.Family ||
				got.Model != c.want.Model || got.Stepping != c.want.Stepping || got.ModelName != c.want.ModelName ||
				got.Hybrid || len(got.CorePMUs) != 0 {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// Later processor blocks must not overwrite the first (a mixed-stepping
// two-socket box still reads as its first CPU), and arm64 blocks with
// different parts are a big.LITTLE, hybrid part. The input is the Altra
// block followed by a Cortex-A53 block (synthetic: no such machine).
func TestParseCPUInfoBlocks(t *testing.T) {
	altra := readTestdata(t, "cpuinfo-neoverse-n1-altra.txt")
	mixed := altra + "processor\t: 1\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd03\nCPU revision\t: 4\n"
	got := ParseCPUInfo(mixed, "arm64")
	if !got.Hybrid || got.Model != 0xd0c || got.Stepping != 1 {
		t.Errorf("big.LITTLE: %+v, want hybrid, model 0xd0c revision 1 from the first block", got)
	}
	same := altra + "processor\t: 1\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n"
	if got := ParseCPUInfo(same, "arm64"); got.Hybrid {
		t.Errorf("two identical Neoverse-N1 blocks parsed as hybrid")
	}
	sky := readTestdata(t, "cpuinfo-skylakex-xeon-8175m.txt")
	two := sky + "processor\t: 8\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\nstepping\t: 7\n"
	if got := ParseCPUInfo(two, "amd64"); got.Stepping != 4 {
		t.Errorf("stepping %d, want the first block's 4", got.Stepping)
	}
}

func TestCorePMUs(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"uprobe", "cpu_atom", "software", "msr", "cpu_core", "uncore_imc_0", "armv8_pmuv3_0", "power"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got := corePMUs(dir)
	want := []string{"cpu_core", "cpu_atom", "armv8_pmuv3_0"}
	if len(got) != len(want) {
		t.Fatalf("core PMUs %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("core PMUs %v, want %v (performance cores first)", got, want)
		}
	}
}

func TestDetectCPU(t *testing.T) {
	cpu := DetectCPU()
	t.Logf("%+v", cpu)
	if cpu.Vendor == "" {
		t.Fatalf("no vendor detected: %+v", cpu)
	}
	if cpu.Arch != runtime.GOARCH {
		t.Errorf("arch %q, want %q", cpu.Arch, runtime.GOARCH)
	}
	if runtime.GOARCH == "amd64" && (cpu.Family == 0 || cpu.ModelName == "") {
		t.Errorf("x86 family/model name missing: %+v", cpu)
	}
}
