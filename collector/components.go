package main

import (
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configtelemetry"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"

	"github.com/cctop/cctop/collector/cctopfile"
)

// settings describes the collector: its components, and configuration read
// from files (--config FILE), environment variables or inline YAML.
func settings() otelcol.CollectorSettings {
	return otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{
			Command:     "cctop-collector",
			Description: "OpenTelemetry Collector for cctop's tests",
			Version:     "0.165.0-cctop",
		},
		Factories: components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				ProviderFactories: []confmap.ProviderFactory{
					fileprovider.NewFactory(),
					envprovider.NewFactory(),
					yamlprovider.NewFactory(),
				},
			},
		},
	}
}

func components() (otelcol.Factories, error) {
	receivers, err := otelcol.MakeFactoryMap[receiver.Factory](otlpreceiver.NewFactory())
	if err != nil {
		return otelcol.Factories{}, err
	}
	exporters, err := otelcol.MakeFactoryMap[exporter.Factory](cctopfile.NewFactory())
	if err != nil {
		return otelcol.Factories{}, err
	}
	return otelcol.Factories{
		Receivers: receivers,
		Exporters: exporters,
		Telemetry: quietTelemetry(),
	}, nil
}

// quietTelemetry is the standard telemetry factory with its metrics off by
// default: the standard default serves them on localhost:8888, which two
// collectors of concurrent tests would both try to bind. A configuration
// can still turn them on under service::telemetry::metrics.
func quietTelemetry() telemetry.Factory {
	std := otelconftelemetry.NewFactory()
	return telemetry.NewFactory(
		func() component.Config {
			cfg := std.CreateDefaultConfig().(*otelconftelemetry.Config)
			cfg.Metrics.Level = configtelemetry.LevelNone
			cfg.Metrics.Readers = nil
			return cfg
		},
		telemetry.WithCreateResource(std.CreateResource),
		telemetry.WithCreateLogger(std.CreateLogger),
		telemetry.WithCreateMeterProvider(std.CreateMeterProvider),
		telemetry.WithCreateTracerProvider(std.CreateTracerProvider),
	)
}
