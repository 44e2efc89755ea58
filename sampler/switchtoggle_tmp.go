package sampler

// TEMPORARY until the switch-toggle branch lands.
func (s *Session) SetSwitchSamples(on bool) error { return nil }
