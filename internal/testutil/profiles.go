package testutil

import "github.com/google/pprof/profile"

// HeapProfile is a Go heap profile's shape: four columns (alloc_objects, alloc_space,
// inuse_objects, inuse_space), no samples/count, a space period, and def as its
// default_sample_type. main.hold holds 4 MiB it allocated; main.churn allocated 64 MiB
// in 4,000 objects and holds 16 KiB of it.
func HeapProfile(def string) *profile.Profile {
	hold := &profile.Function{ID: 1, Name: "main.hold"}
	churn := &profile.Function{ID: 2, Name: "main.churn"}
	main := &profile.Function{ID: 3, Name: "main.main"}
	locs := []*profile.Location{
		{ID: 1, Address: 0x10, Line: []profile.Line{{Function: hold}}},
		{ID: 2, Address: 0x20, Line: []profile.Line{{Function: churn}}},
		{ID: 3, Address: 0x30, Line: []profile.Line{{Function: main}}},
	}
	return &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"},
		},
		DefaultSampleType: def,
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            524288,
		Sample: []*profile.Sample{
			{Location: []*profile.Location{locs[0], locs[2]}, Value: []int64{10, 4 << 20, 10, 4 << 20}},
			{Location: []*profile.Location{locs[1], locs[2]}, Value: []int64{4000, 64 << 20, 1, 16 << 10}},
		},
		Location: locs, Function: []*profile.Function{hold, churn, main},
	}
}
