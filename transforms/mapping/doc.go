// Package mapping holds the stateless transforms of Beam YAML: MapToFields, Filter, Explode,
// Flatten, Partition, LogForTesting, AssertEqual, StripErrorMetadata and ValidateWithSchema. Each registers itself with the component registry in
// init(); expressions are compiled with transforms/expr when the transform is built, and
// failures on a record go to the error_handling output or stop the pipeline at that record.
package mapping
