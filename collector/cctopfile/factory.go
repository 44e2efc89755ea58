package cctopfile

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/xexporter"
)

// Type is the exporter's name in a collector configuration.
var Type = component.MustNewType("cctopfile")

// NewFactory returns the factory of the cctopfile exporter, which supports
// the profiles signal only.
func NewFactory() xexporter.Factory {
	return xexporter.NewFactory(Type,
		func() component.Config { return createDefaultConfig() },
		xexporter.WithProfiles(createProfiles, component.StabilityLevelDevelopment))
}

func createProfiles(_ context.Context, set exporter.Settings, cfg component.Config) (xexporter.Profiles, error) {
	return newExporter(cfg.(*Config), set.Logger), nil
}
