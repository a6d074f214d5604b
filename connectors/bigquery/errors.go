package bigquery

import (
	"errors"

	"cloud.google.com/go/bigquery/storage/apiv1/storagepb"
	"github.com/googleapis/gax-go/v2/apierror"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// storageErrorCode returns the StorageError code that the Storage Write API attached to err,
// if any. It is found as a detail of the APIError (apierror.FromError, then
// Details().ExtractProtoMessage), not by a type assertion on err as managedwriter's package
// documentation suggests.
func storageErrorCode(err error) (storagepb.StorageError_StorageErrorCode, bool) {
	apiErr, ok := apierror.FromError(err)
	if !ok {
		return 0, false
	}
	se := &storagepb.StorageError{}
	if apiErr.Details().ExtractProtoMessage(se) != nil {
		return 0, false
	}
	return se.GetCode(), true
}

// isOffsetAlreadyExists: "The row was already written. You can safely ignore this error."
// (https://cloud.google.com/bigquery/docs/write-api#error_handling)
func isOffsetAlreadyExists(code storagepb.StorageError_StorageErrorCode) bool {
	return code == storagepb.StorageError_OFFSET_ALREADY_EXISTS
}

// isNotFound reports a gRPC NOT_FOUND, as GetWriteStream answers for a stream BigQuery does
// not know (never created, or its metadata garbage-collected).
func isNotFound(err error) bool {
	return grpcCode(err) == codes.NotFound
}

// retryable reports errors worth trying again: the service was unavailable or the call ran
// out of time, so its outcome is unknown and a retry is safe because commits are idempotent
// (STREAM_ALREADY_COMMITTED counts as committed).
func retryable(err error) bool {
	switch grpcCode(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Aborted, codes.Internal, codes.ResourceExhausted:
		return true
	}
	return false
}

func grpcCode(err error) codes.Code {
	var apiErr *apierror.APIError
	if errors.As(err, &apiErr) && apiErr.GRPCStatus() != nil {
		return apiErr.GRPCStatus().Code()
	}
	if s, ok := status.FromError(err); ok {
		return s.Code()
	}
	return codes.Unknown
}
