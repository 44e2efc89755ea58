package engine

import (
	"fmt"
	"strings"

	"github.com/cctop/cctop/sampler"
)

// What a sampler configuration samples, in words and numbers: for the
// record summary, the profile's comments and the live counters panel,
// which must all say the same.

// eventNames names the sampling events of cfg.
func eventNames(cfg sampler.Config) string {
	var names []string
	if cfg.Leader != dummyEvent {
		names = append(names, cfg.Leader.Name)
	}
	for _, g := range cfg.Extra {
		names = append(names, g.Leader.Name)
	}
	return strings.Join(names, ",")
}

// Describe is the one-line form of the sampling parameters, for summaries
// and profile comments.
func Describe(cfg sampler.Config) string {
	if probesSample(cfg) {
		return fmt.Sprintf("every %d calls of %d counted functions", samplePeriod(cfg), len(cfg.Extra))
	}
	rate := fmt.Sprintf("%d Hz", cfg.Freq)
	if cfg.Period > 0 {
		rate = fmt.Sprintf("every %d events", cfg.Period)
	}
	return fmt.Sprintf("%s at %s", cfg.Leader.Name, rate)
}

// probesSample reports whether cfg's samples come from its probes (the
// calls and exact triggers without a PMU): its dummy leader only carries
// the sideband records.
func probesSample(cfg sampler.Config) bool { return cfg.Leader == dummyEvent && len(cfg.Extra) > 0 }

// samplePeriod is the fixed period of cfg's sampling events, 0 in
// frequency mode: the probes' when they sample, else the leader's.
func samplePeriod(cfg sampler.Config) uint64 {
	if probesSample(cfg) {
		return cfg.Extra[0].Period
	}
	return cfg.Period
}
