package cctopfile

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.uber.org/zap"
)

// fileExporter appends each batch to the file as one record.
type fileExporter struct {
	cfg     *Config
	logger  *zap.Logger
	marshal pprofile.Marshaler

	mu    sync.Mutex
	file  *os.File
	calls int // batches handed to ConsumeProfiles so far
}

func newExporter(cfg *Config, logger *zap.Logger) *fileExporter {
	e := &fileExporter{cfg: cfg, logger: logger}
	if cfg.Format == FormatProto {
		e.marshal = &pprofile.ProtoMarshaler{}
	} else {
		e.marshal = &pprofile.JSONMarshaler{}
	}
	return e
}

// Start opens the file for appending: a restarted collector continues the
// records of the previous run instead of losing them.
func (e *fileExporter) Start(context.Context, component.Host) error {
	f, err := os.OpenFile(e.cfg.Path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("cctopfile: %w", err)
	}
	e.mu.Lock()
	e.file = f
	e.mu.Unlock()
	return nil
}

// Shutdown closes the file; it may be called without Start.
func (e *fileExporter) Shutdown(context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.file == nil {
		return nil
	}
	err := e.file.Close()
	e.file = nil
	return err
}

func (e *fileExporter) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// ConsumeProfiles writes pd as one record with a single write and syncs it
// before returning, so a reader polling the file sees only whole records
// and a client told "accepted" finds its batch on disk.
func (e *fileExporter) ConsumeProfiles(_ context.Context, pd pprofile.Profiles) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls++
	if e.calls <= e.cfg.RejectFirst {
		err := newRejection(e.cfg, e.calls, e.cfg.RejectFirst)
		e.logger.Info("rejecting a profiles batch", zap.Int("call", e.calls), zap.Error(err))
		return err
	}
	if e.file == nil {
		return fmt.Errorf("cctopfile: export before start or after shutdown")
	}
	msg, err := e.marshal.MarshalProfiles(pd)
	if err != nil {
		return fmt.Errorf("cctopfile: marshal: %w", err)
	}
	rec, err := frame(e.cfg.Format, msg)
	if err != nil {
		return err
	}
	if _, err := e.file.Write(rec); err != nil {
		return fmt.Errorf("cctopfile: %w", err)
	}
	if err := e.file.Sync(); err != nil {
		return fmt.Errorf("cctopfile: %w", err)
	}
	return nil
}

// frame makes one record of msg as the contrib fileexporter does: a JSON
// message followed by a newline, or a proto message preceded by its length
// as 4 bytes, big-endian.
func frame(format string, msg []byte) ([]byte, error) {
	if format != FormatProto {
		return append(msg, '\n'), nil
	}
	if uint64(len(msg)) > math.MaxUint32 {
		return nil, fmt.Errorf("cctopfile: a %d-byte message does not fit a 4-byte length", len(msg))
	}
	rec := make([]byte, 4, 4+len(msg))
	binary.BigEndian.PutUint32(rec, uint32(len(msg)))
	return append(rec, msg...), nil
}
