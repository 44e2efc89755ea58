// Package exporter owns the delivery of profile windows to an OpenTelemetry
// Collector over OTLP/gRPC (the profiles signal): the connection (TLS with the
// system roots or a CA file, or plaintext; gzip; the user's headers as metadata
// on every call; a per-call timeout), a queue of windows bounded by count and by
// bytes, the retry schedule, the counts `cctop agent` shows, and the one-line
// errors it prints. It does not build windows (package otlp converts trees to
// pprofile.Profiles) and knows nothing of sampling.
//
// Guarantees. Enqueue never blocks: it takes a short lock, and when the queue is
// full it drops the OLDEST waiting windows, counted in Stats().Dropped, never the
// one in an RPC attempt. A queued window is sent in order, at least once, until
// the collector accepts it (Sent; a partial success counts as sent, with the
// rejected profiles and message kept), refuses it with a code the OTLP spec
// calls non-retryable (Failed, error kept), it is pushed out by newer windows,
// or Close's deadline passes (Dropped, and Close says how many). Retryable codes
// (UNAVAILABLE, DEADLINE_EXCEEDED, ABORTED, CANCELLED, OUT_OF_RANGE, DATA_LOSS,
// and RESOURCE_EXHAUSTED only when the server sends RetryInfo, as the spec says)
// are retried with exponential backoff and jitter, never sooner than the server's
// RetryInfo delay. A window whose call timed out may have reached the collector
// and is sent again: delivery is at-least-once, not exactly-once. The one failure
// that is not retried is a TLS handshake the server's certificate fails (or a
// server that does not speak TLS): retrying it cannot succeed, so the exporter
// gives up, drops its queue, and reports it through Err and Failed; Check lets
// the agent find that (or an endpoint without the profiles service) at start,
// while a collector that is merely down is a transient error and windows queue.
package exporter
