package cct

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// DefaultSampleIndex is the column a viewer shows first, by pprof's rule: the profile's
// default_sample_type, else its last column. cctop's own profiles name their trigger's
// column (or their time off the CPU) as the default.
func DefaultSampleIndex(p *profile.Profile) int {
	if p.DefaultSampleType != "" {
		for i, vt := range p.SampleType {
			if vt.Type == p.DefaultSampleType {
				return i
			}
		}
	}
	return len(p.SampleType) - 1
}

// SampleIndex is the column spec names, as pprof's -sample_index takes it: a type's name
// ("alloc_space") or its index from 0.
func SampleIndex(p *profile.Profile, spec string) (int, error) {
	if n, err := strconv.Atoi(spec); err == nil {
		if n < 0 || n >= len(p.SampleType) {
			return 0, fmt.Errorf("sample index %d out of range: the profile has %s", n, SampleTypes(p))
		}
		return n, nil
	}
	for i, vt := range p.SampleType {
		if vt.Type == spec {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no sample type %q: the profile has %s", spec, SampleTypes(p))
}

// SampleTypes lists p's columns as "type/unit", comma-separated.
func SampleTypes(p *profile.Profile) string {
	names := make([]string, len(p.SampleType))
	for i, vt := range p.SampleType {
		names[i] = vt.Type + "/" + vt.Unit
	}
	return strings.Join(names, ", ")
}
