package cctopfile

import (
	"fmt"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// rejection is the error of a refused batch. The otlpreceiver returns to
// the client the status it finds with status.FromError, which looks through
// the pipeline's wrappers (consumererror.NewDownstream) with errors.As and
// keeps the code and details but replaces the message by the wrapper's
// Error(). Error therefore returns the bare message, so the client reads it
// once rather than as "rpc error: code = ... desc = rpc error: ...".
type rejection struct{ st *status.Status }

func (r rejection) Error() string              { return r.st.Message() }
func (r rejection) GRPCStatus() *status.Status { return r.st }

// newRejection builds the error of the n-th (1-based) of the first 'of'
// refused batches.
func newRejection(cfg *Config, n, of int) error {
	code := codes.ResourceExhausted
	if cfg.RejectCode == CodeUnavailable {
		code = codes.Unavailable
	}
	st := status.New(code, fmt.Sprintf("cctopfile: rejecting export %d of the first %d (reject_first)", n, of))
	if cfg.RetryDelay > 0 {
		withInfo, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(cfg.RetryDelay)})
		if err != nil {
			// A RetryInfo always marshals; keep the bare status if not.
			return rejection{st}
		}
		st = withInfo
	}
	return rejection{st}
}
