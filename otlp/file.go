package otlp

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"go.opentelemetry.io/collector/pdata/pprofile"
)

// maxBytes bounds what Read takes after decompression: a gzip bomb gets an error
// rather than all of memory. (A variable for the tests.)
var maxBytes = 1 << 30

// The formats WriteFile writes.
const (
	FormatJSON  = "json"  // JSON lines: one ExportProfilesServiceRequest per line
	FormatProto = "proto" // each request prefixed by its length, 4 bytes big-endian
)

// ReadFile reads an OTLP profiles file (see Read).
func ReadFile(path string) (pprofile.Profiles, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return pprofile.Profiles{}, err
	}
	return Read(data)
}

// Read decodes what the OpenTelemetry Collector's file exporter writes, and a bare
// message: the input, gzip-compressed or not, is
//
//   - JSON lines (first non-blank byte '{'): one OTLP/JSON ExportProfilesServiceRequest
//     per line, blank lines skipped;
//   - length-prefixed protobuf: each request after its length in 4 bytes, big-endian.
//     A message never starts with a zero byte (field 0 does not exist) and a prefix of
//     a record under 16 MiB does, so a leading zero means this format; otherwise it is
//     taken when the prefixes tile the input exactly;
//   - one bare protobuf ExportProfilesServiceRequest.
//
// All records are merged into one Profiles, their dictionaries into one (pdata's
// MergeTo). Errors are one line and say where: "otlp: line 3: ...", "otlp: record 2
// at byte 1234: ...". Input with no resource profiles at all is an error too.
func Read(data []byte) (pprofile.Profiles, error) {
	data, err := decompress(data)
	if err != nil {
		return pprofile.Profiles{}, err
	}
	var recs []record
	switch {
	case len(bytes.TrimSpace(data)) == 0:
		return pprofile.Profiles{}, errors.New("otlp: empty input")
	case bytes.TrimLeft(data, " \t\r\n")[0] == '{':
		recs, err = jsonLines(data)
	default:
		recs, err = protoRecords(data)
	}
	if err != nil {
		return pprofile.Profiles{}, err
	}
	ps, err := mergeRecords(recs)
	if err != nil {
		return pprofile.Profiles{}, err
	}
	if ps.ResourceProfiles().Len() == 0 {
		return pprofile.Profiles{}, errors.New("otlp: no resource profiles in the input")
	}
	return ps, nil
}

// record is one decoded request and where it was.
type record struct {
	ps    pprofile.Profiles
	where string
}

// decompress inflates gzip input, within maxBytes; other input is returned as is.
func decompress(data []byte) ([]byte, error) {
	if len(data) > maxBytes {
		return nil, fmt.Errorf("otlp: input larger than %d MiB: not read", maxBytes>>20)
	}
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		return data, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("otlp: gzip: %v", oneLine(err))
	}
	out, err := io.ReadAll(io.LimitReader(zr, int64(maxBytes)+1))
	if err != nil {
		return nil, fmt.Errorf("otlp: gzip: %v", oneLine(err))
	}
	if len(out) > maxBytes {
		return nil, fmt.Errorf("otlp: decompressed input larger than %d MiB: not read", maxBytes>>20)
	}
	return out, nil
}

// oneLine is err's text on one line: decoders quote the input they stopped at.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

func jsonLines(data []byte) ([]record, error) {
	var recs []record
	var u pprofile.JSONUnmarshaler
	for n, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		ps, err := u.UnmarshalProfiles(line)
		if err != nil {
			return nil, fmt.Errorf("otlp: line %d: %s", n+1, oneLine(err))
		}
		recs = append(recs, record{ps, fmt.Sprintf("line %d", n+1)})
	}
	return recs, nil
}

// frames splits length-prefixed input into its records' bounds, or says why it cannot.
func frames(data []byte) (bounds [][2]int, err error) {
	for off := 0; off < len(data); {
		if len(data)-off < 4 {
			return nil, fmt.Errorf("otlp: record %d at byte %d: %d bytes left, too few for a length", len(bounds)+1, off, len(data)-off)
		}
		n := int(binary.BigEndian.Uint32(data[off:]))
		if n > len(data)-off-4 {
			return nil, fmt.Errorf("otlp: record %d at byte %d: length %d but %d bytes left (truncated?)", len(bounds)+1, off, n, len(data)-off-4)
		}
		bounds = append(bounds, [2]int{off + 4, off + 4 + n})
		off += 4 + n
	}
	return bounds, nil
}

func protoRecords(data []byte) ([]record, error) {
	var u pprofile.ProtoUnmarshaler
	bounds, ferr := frames(data)
	if ferr != nil && data[0] != 0 {
		// Not framed: one bare message.
		ps, err := u.UnmarshalProfiles(data)
		if err != nil {
			return nil, fmt.Errorf("otlp: not an OTLP profiles message: %s", oneLine(err))
		}
		return []record{{ps, "the message"}}, nil
	}
	if ferr != nil {
		return nil, ferr
	}
	recs := make([]record, 0, len(bounds))
	for i, b := range bounds {
		ps, err := u.UnmarshalProfiles(data[b[0]:b[1]])
		if err != nil {
			if i == 0 && len(bounds) == 1 && data[0] != 0 {
				// A bare message whose first bytes happen to be its own length.
				if bare, berr := u.UnmarshalProfiles(data); berr == nil {
					return []record{{bare, "the message"}}, nil
				}
			}
			return nil, fmt.Errorf("otlp: record %d at byte %d: %s", i+1, b[0]-4, oneLine(err))
		}
		recs = append(recs, record{ps, fmt.Sprintf("record %d at byte %d", i+1, b[0]-4)})
	}
	return recs, nil
}

// WriteFile writes ps to path as one record in format (FormatJSON or FormatProto),
// gzip-compressed if path ends in ".gz": what Read reads. The file is replaced
// atomically. ps is not changed (pdata's marshalers would rewrite its attributes as
// string-table references, so a mutable ps is copied first).
func WriteFile(path string, ps pprofile.Profiles, format string) error {
	if !ps.IsReadOnly() {
		cp := pprofile.NewProfiles()
		ps.CopyTo(cp)
		ps = cp
	}
	var body []byte
	var err error
	switch format {
	case FormatJSON:
		var m pprofile.JSONMarshaler
		if body, err = m.MarshalProfiles(ps); err == nil {
			body = append(body, '\n')
		}
	case FormatProto:
		var m pprofile.ProtoMarshaler
		var msg []byte
		if msg, err = m.MarshalProfiles(ps); err == nil {
			if uint64(len(msg)) > 1<<32-1 {
				return fmt.Errorf("otlp: writing %s: message of %d bytes too large for a 4-byte length", path, len(msg))
			}
			body = binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(msg)), uint32(len(msg)))
			body = append(body, msg...)
		}
	default:
		return fmt.Errorf("otlp: unknown format %q (%s or %s)", format, FormatJSON, FormatProto)
	}
	if err != nil {
		return fmt.Errorf("otlp: encoding %s: %w", path, err)
	}
	if strings.HasSuffix(path, ".gz") {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(body); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		body = buf.Bytes()
	}
	return writeAtomic(path, body)
}

func writeAtomic(path string, body []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
