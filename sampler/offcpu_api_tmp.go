package sampler

// TEMPORARY until the offcpu-sampler branch lands.
func (s *Session) OffCPU() (source, why string) { return "", "" }
