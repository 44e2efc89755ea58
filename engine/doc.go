// Package engine is cctop's profiler between the sampler and the user
// interfaces: everything that turns perf_event_open records into a
// calling context tree and keeps it current.
//
// It owns the run (open a session on a target, arm its counters, record,
// close it and release its probes), the batch-to-tree pipeline, user stack
// unwinding and its completeness, the unwind plan, the counting plan and
// the automatic arming of uprobe counters, the sample weights behind the
// call estimates, the live aggregator behind the TUI and its actions, the
// saved-profile source, profile export, the wording of target events, the
// accuracy evaluation and the doctor's checks.
//
// A front end chooses Options, completes a sampler.Config with Prepare,
// and then either records (Record) or runs live (StartLive, whose Live is
// a tui.Source); OpenProfiles serves saved profiles (files, stdin, URLs) to the same TUI.
package engine
