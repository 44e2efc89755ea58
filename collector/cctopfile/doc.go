// Package cctopfile owns the cctopfile exporter: it appends every profiles
// batch the pipeline hands it to one file, in the record formats of the
// contrib fileexporter (JSON lines, or 4-byte big-endian length-prefixed
// protobuf), so `cctop view` reads its output like the contrib exporter's.
// For tests of cctop's agent it can refuse the first N batches with a real
// gRPC status (resource_exhausted or unavailable, optionally carrying a
// google.rpc.RetryInfo), which the OTLP receiver passes to the client as is.
package cctopfile
