// Package status is `sluice status`: per sink of a pipeline, the checkpoint it committed
// (epoch, offsets, when and by which spec), the ends of the partitions upstream of it and the
// lag between the two (docs/operations.md). It opens no sink: it reads checkpoints through
// component.CheckpointReader and ends through component.EndOffsets, on the plan's built
// components.
package status
