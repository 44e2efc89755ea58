// Package otlp owns cctop's profiles in the OpenTelemetry profiles signal (OTLP,
// development version, as pdata's pprofile package has it): the conversion of calling
// context trees (cct.Tree and cct.Meta, one per process and window) into
// pprofile.Profiles and back, the merge of what comes back into one tree for the
// viewer, and the files of OTLP profiles (the Collector file exporter's JSON lines and
// length-prefixed protobuf, a bare message, gzip-compressed or not) with the rule
// that tells them from pprof files.
//
// The mapping follows cct's pprof files (pprof_write.go), one Profile per value
// column since an OTLP profile has one sample type: see Builder.Append for what is
// written and Trees for what is read, including from other producers (the
// OpenTelemetry eBPF profiler's unsymbolized frames, timestamp-only samples).
//
// It does no I/O besides reading and writing files, and no delivery: the exporter
// package sends what Append builds. Every index read from a message is bounds-checked
// (pdata's decoders do not), so bad input is an error, never a panic.
package otlp
