package sampler

import "encoding/binary"

// enc builds raw records the way the kernel lays them out, for tests.
type enc struct{ b []byte }

func (e *enc) u64(v uint64) *enc { e.b = binary.NativeEndian.AppendUint64(e.b, v); return e }
func (e *enc) u32(v uint32) *enc { e.b = binary.NativeEndian.AppendUint32(e.b, v); return e }
func (e *enc) str(s string) *enc {
	n := (len(s) + 1 + 7) &^ 7
	e.b = append(e.b, s...)
	for i := len(s); i < n; i++ {
		e.b = append(e.b, 0)
	}
	return e
}

// record prefixes body with a header.
func record(typ uint32, misc uint16, body []byte) []byte {
	h := make([]byte, 8, 8+len(body))
	binary.NativeEndian.PutUint32(h, typ)
	binary.NativeEndian.PutUint16(h[4:], misc)
	binary.NativeEndian.PutUint16(h[6:], uint16(8+len(body)))
	return append(h, body...)
}

// testFormat is the format Open uses.
var testFormat = Format{
	SampleType:  sampleIdentifier | sampleIP | sampleTID | sampleTime | sampleCPU | samplePeriod | sampleRead | sampleCallchain,
	ReadFormat:  readGroup | readID | readTotalTimeEnabled | readTotalTimeRunning,
	SampleIDAll: true,
}

// sampleID appends the sample_id_all block of testFormat.
func (e *enc) sampleID(pid, tid uint32, time uint64, cpu uint32, id uint64) *enc {
	return e.u32(pid).u32(tid).u64(time).u32(cpu).u32(0).u64(id)
}

type testSample struct {
	id, ip       uint64
	pid, tid     uint32
	time         uint64
	cpu          uint32
	period       uint64
	enabled, run uint64
	values       []Value
	chain        []uint64
	noPeriod     bool // the format has no PERIOD field
}

func (s testSample) bytes() []byte {
	e := &enc{}
	e.u64(s.id).u64(s.ip).u32(s.pid).u32(s.tid).u64(s.time).u32(s.cpu).u32(0)
	if !s.noPeriod {
		e.u64(s.period)
	}
	e.u64(uint64(len(s.values))).u64(s.enabled).u64(s.run)
	for _, v := range s.values {
		e.u64(v.Value).u64(v.ID)
	}
	e.u64(uint64(len(s.chain)))
	for _, pc := range s.chain {
		e.u64(pc)
	}
	return record(recSample, miscUser, e.b)
}
