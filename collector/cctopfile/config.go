package cctopfile

import (
	"errors"
	"fmt"
	"time"
)

// Formats and rejection codes a Config accepts.
const (
	FormatJSON  = "json"
	FormatProto = "proto"

	CodeResourceExhausted = "resource_exhausted"
	CodeUnavailable       = "unavailable"
)

// Config is the exporter's configuration under exporters::cctopfile.
type Config struct {
	// Path is the file the records are appended to; it is created if
	// missing and never truncated, so a restarted collector continues it.
	Path string `mapstructure:"path"`
	// Format is FormatJSON (the default) or FormatProto.
	Format string `mapstructure:"format"`

	// RejectFirst makes the first RejectFirst batches fail, counted from the
	// exporter's start, so a client's retry path can be tested.
	RejectFirst int `mapstructure:"reject_first"`
	// RejectCode is the gRPC code of a rejection: CodeResourceExhausted (the
	// default) or CodeUnavailable.
	RejectCode string `mapstructure:"reject_code"`
	// RetryDelay, when positive, is sent with each rejection as a
	// google.rpc.RetryInfo detail.
	RetryDelay time.Duration `mapstructure:"retry_delay"`
}

func createDefaultConfig() *Config {
	return &Config{Format: FormatJSON, RejectCode: CodeResourceExhausted}
}

// Validate is called by the collector before the exporter is created.
func (c *Config) Validate() error {
	var errs []error
	if c.Path == "" {
		errs = append(errs, errors.New("path is required"))
	}
	switch c.Format {
	case FormatJSON, FormatProto:
	default:
		errs = append(errs, fmt.Errorf("format %q: want %q or %q", c.Format, FormatJSON, FormatProto))
	}
	if c.RejectFirst < 0 {
		errs = append(errs, fmt.Errorf("reject_first %d: must not be negative", c.RejectFirst))
	}
	switch c.RejectCode {
	case CodeResourceExhausted, CodeUnavailable:
	default:
		errs = append(errs, fmt.Errorf("reject_code %q: want %q or %q", c.RejectCode, CodeResourceExhausted, CodeUnavailable))
	}
	if c.RetryDelay < 0 {
		errs = append(errs, fmt.Errorf("retry_delay %v: must not be negative", c.RetryDelay))
	}
	return errors.Join(errs...)
}
