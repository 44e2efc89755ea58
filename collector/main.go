package main

import (
	"fmt"
	"os"

	"go.opentelemetry.io/collector/featuregate"
	"go.opentelemetry.io/collector/otelcol"
)

// profilesGate is the feature gate that admits profiles pipelines; without
// it the collector refuses a configuration with one.
const profilesGate = "service.profilesSupport"

func main() {
	if err := enableProfiles(); err != nil {
		fmt.Fprintln(os.Stderr, "cctop-collector:", err)
		os.Exit(1)
	}
	if err := otelcol.NewCommand(settings()).Execute(); err != nil {
		// The command has printed the error already.
		os.Exit(1)
	}
}

// enableProfiles switches the profiles gate on; a --feature-gates flag can
// still switch it off, as it is applied after this.
func enableProfiles() error {
	return featuregate.GlobalRegistry().Set(profilesGate, true)
}
