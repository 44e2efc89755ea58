package engine

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/correct"
	"github.com/cctop/cctop/hpm"
	"github.com/cctop/cctop/sampler"
)

// hwSample lays out one PERF_RECORD_SAMPLE the way the kernel writes it for
// cctop's primary group (sampler.SessionFormat): identifier, ip, pid/tid,
// time, cpu, period, the group read, the callchain.
func hwSample(id, ip uint64, tid, cpu uint32, time, period, enabled, running uint64, values [][2]uint64, chain []uint64) []byte {
	var b []byte
	u64 := func(v uint64) { b = binary.NativeEndian.AppendUint64(b, v) }
	u32 := func(v uint32) { b = binary.NativeEndian.AppendUint32(b, v) }
	u64(id)
	u64(ip)
	u32(tid)
	u32(tid)
	u64(time)
	u32(cpu)
	u32(0)
	u64(period)
	u64(uint64(len(values)))
	u64(enabled)
	u64(running)
	for _, v := range values {
		u64(v[0]) // value
		u64(v[1]) // id
	}
	u64(uint64(len(chain)))
	for _, pc := range chain {
		u64(pc)
	}
	h := make([]byte, 8, 8+len(b))
	binary.NativeEndian.PutUint32(h, 9) // PERF_RECORD_SAMPLE
	binary.NativeEndian.PutUint16(h[4:], 2)
	binary.NativeEndian.PutUint16(h[6:], uint16(8+len(b)))
	return append(h, b...)
}

// TestHardwareCounterPath feeds group-read samples shaped as Intel and AMD
// PMUs produce them (a cycles leader sampling every 1,000,000 cycles with the
// call event as a member, two threads on two CPUs, one stream multiplexed)
// through decoding and weighting, and checks the per-context call estimates.
func TestHardwareCounterPath(t *testing.T) {
	for _, c := range []struct {
		name string
		cpu  hpm.CPU
	}{
		{"intel-icelake", hpm.CPU{Arch: "x86_64", Vendor: "GenuineIntel", Family: 6, Model: 0x6a, CorePMUs: []string{"cpu"}}},
		{"amd-zen4", hpm.CPU{Arch: "x86_64", Vendor: "AuthenticAMD", Family: 0x19, Model: 0x11, CorePMUs: []string{"cpu"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			evs, why := hpm.CallEvents(c.cpu, func(string) (uint32, error) { return 4, nil })
			if len(evs) == 0 {
				t.Fatalf("no call event: %s", why)
			}
			if evs[0].Spec().Type != 4 || evs[0].Spec().Config == 0 {
				t.Fatalf("call event %+v is not a raw PMU event", evs[0])
			}
			// Event ids as PERF_EVENT_IOC_ID would report them: leader
			// 100/101 (CPU 0/1), call counter 200/201.
			refs := map[uint64]sampler.EventRef{100: {Member: 0}, 101: {Member: 0}, 200: {Member: 1}, 201: {Member: 1}}
			event := func(id uint64) (sampler.EventRef, bool) { r, ok := refs[id]; return r, ok }

			tree := cct.New()
			leaf := tree.Intern(cct.Func{Name: "leaf"})
			siteC := tree.Intern(cct.Func{Name: "siteC"})
			siteD := tree.Intern(cct.Func{Name: "siteD"})
			nodeC := tree.Add([]cct.Frame{{Func: leaf, Addr: 0x10}, {Func: siteC, Addr: 0x20}}, 1, cct.Metrics{})
			nodeD := tree.Add([]cct.Frame{{Func: leaf, Addr: 0x10}, {Func: siteD, Addr: 0x30}}, 1, cct.Metrics{})

			w := newWeighing(triggerTime, event, 0)
			dec := sampler.NewDecoder(sampler.SessionFormat())
			const period = 1_000_000
			// Thread 7 on CPU 0: 4 samples in phase C (2000 calls per
			// period), then 4 in phase D (1000 calls per period); the 6th
			// sample came 250,000 cycles late. Thread 8 on CPU 1 runs phase
			// C only and its group is multiplexed (running = half of
			// enabled), which must not change its calls: the counters of
			// one group stop and start together.
			type step struct {
				tid, cpu         uint32
				node             cct.NodeID
				cycles, calls    uint64
				enabled, running uint64
			}
			var steps []step
			var cyc, calls uint64
			for i := 0; i < 8; i++ {
				n, per := nodeC, uint64(2000)
				if i >= 4 {
					n, per = nodeD, 1000
				}
				d := uint64(period)
				if i == 5 {
					d += 250_000
				}
				cyc += d
				calls += per * d / period
				steps = append(steps, step{7, 0, n, cyc, calls, cyc, cyc})
			}
			cyc, calls = 0, 0
			for i := 0; i < 4; i++ {
				cyc += period
				calls += 2000
				steps = append(steps, step{8, 1, nodeC, cyc, calls, 2 * cyc, cyc})
			}
			var rec sampler.Record
			for i, s := range steps {
				raw := hwSample(100+uint64(s.cpu), 0x401000, s.tid, s.cpu, uint64(i+1)*1000, period, s.enabled, s.running,
					[][2]uint64{{s.cycles, 100 + uint64(s.cpu)}, {s.calls, 200 + uint64(s.cpu)}}, []uint64{^uint64(512) + 1, 0x401000})
				if ok, err := dec.Decode(raw, &rec); !ok || err != nil {
					t.Fatalf("decode: %v %v", ok, err)
				}
				w.add(&rec, s.node)
			}
			w.apply(tree, 1000)
			c, d := tree.Node(nodeC).Self, tree.Node(nodeD).Self
			// Density: C = thread 7's 4x2000 + thread 8's 4x2000; D = 4 x
			// 1000 with the late sample's 1250. With latency at alpha
			// 1000... the late sample (250,000 cycles) weighs
			// 1250 * 1e6 / (1e6 + 1000*250000) ~= 4.98.
			if c.Calls != 16000 || d.Calls != 4250 {
				t.Errorf("calls C %d D %d, want 16000 and 4250", c.Calls, d.Calls)
			}
			wantAdj := 3000 + 1250*1e6/(1e6+1000*250000.0)
			if d.CallsAdj != int64(math.Round(wantAdj)) || c.CallsAdj != 16000 {
				t.Errorf("calls_adjusted C %d D %d, want 16000 and %.0f", c.CallsAdj, d.CallsAdj, wantAdj)
			}
			// And the same numbers through correct directly, for the record.
			if got := correct.Weight(correct.Params{Density: true, Latency: true, Alpha: 1000}, 1250, 1e6, 250000); math.Abs(got-4.98) > 0.01 {
				t.Errorf("weight %.3f", got)
			}
		})
	}
}
