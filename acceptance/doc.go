// Package acceptance holds sluice's end-to-end tests: they build the sluice binary once (with the
// build tag sluicetest, which adds the crash tests' pause hooks) and run it as a process on
// real components: `sluice dev kafka` brokers in processes of their own, Iceberg tables on
// disk read back with iceberg-go, BigQuery through the Storage Write API server on loopback.
// Crash tests SIGKILL pipelines at random points, consumer-group tests run copies side by
// side, outage tests stop brokers; then an independent reader checks every record.
//
// The package has no code besides its tests. Tests that run for seconds skip under
// `go test -short`; independent tests run in parallel. docs/testing.md lists what each file
// holds and how to run one test.
package acceptance
