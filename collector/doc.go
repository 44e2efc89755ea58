// Command cctop-collector is an OpenTelemetry Collector for cctop's tests
// and benchmarks, built from the collector's own modules: the OTLP receiver
// and the cctopfile exporter (package cctopfile), with the profiles signal
// enabled. It owns nothing else; see internal/testutil/collector.go in the
// main module for the helper that builds and runs it.
//
// Run it as
//
//	cctop-collector --config FILE
//
// The service.profilesSupport feature gate is switched on before the
// command line is read, and the collector's own metrics default to level
// none, so a plain run binds only the ports the configuration names.
package main
