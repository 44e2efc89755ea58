package otlp

import (
	"bytes"
	"encoding/binary"

	"go.opentelemetry.io/collector/pdata/pprofile"
)

// Sniff reports whether data (gzip-compressed or not) looks like an OTLP profiles file
// that Read takes, rather than a pprof profile.proto. Both are protobuf, and a lenient
// decoder takes much of one for the other, so the rule is strict, on the first record:
//
//   - JSON: it parses as an ExportProfilesServiceRequest with resource profiles (pprof
//     has no JSON form);
//   - protobuf (the first length-prefixed record, or the whole input): its top-level
//     fields are only resource_profiles (1) and dictionary (2), both length-delimited,
//     each present; it parses; it has resource profiles; and its dictionary's string
//     table is non-empty and starts with "" as the format requires.
//
// A pprof profile fails the field rule: it always has a string table, field 6, and
// mostly mappings, locations and functions, fields 3 to 5. (A pprof message with only
// fields 1 and 2 would have sample types, whose varint fields do not parse as a
// resource.) Gzip-compressed pprof is decompressed and answers false the same way.
func Sniff(data []byte) bool {
	data, err := decompress(data)
	if err != nil {
		return false
	}
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		line, _, _ := bytes.Cut(t, []byte("\n"))
		var u pprofile.JSONUnmarshaler
		ps, err := u.UnmarshalProfiles(line)
		return err == nil && ps.ResourceProfiles().Len() > 0
	}
	if len(data) == 0 {
		return false
	}
	if looksOTLP(data) {
		return true
	}
	if len(data) >= 4 {
		if n := binary.BigEndian.Uint32(data); uint64(n) <= uint64(len(data)-4) {
			return looksOTLP(data[4 : 4+n])
		}
	}
	return false
}

// looksOTLP applies the protobuf rule of Sniff to one message.
func looksOTLP(msg []byte) bool {
	var have [3]bool
	for off := 0; off < len(msg); {
		tag, n := binary.Uvarint(msg[off:])
		if n <= 0 {
			return false
		}
		off += n
		field, wire := tag>>3, tag&7
		if (field != 1 && field != 2) || wire != 2 {
			return false
		}
		l, n := binary.Uvarint(msg[off:])
		if n <= 0 || l > uint64(len(msg)-off-n) {
			return false
		}
		off += n + int(l)
		have[field] = true
	}
	if !have[1] || !have[2] {
		return false
	}
	var u pprofile.ProtoUnmarshaler
	ps, err := u.UnmarshalProfiles(msg)
	if err != nil || ps.ResourceProfiles().Len() == 0 {
		return false
	}
	st := ps.Dictionary().StringTable()
	return st.Len() > 0 && st.At(0) == ""
}
