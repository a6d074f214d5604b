package iceberg

// PauseEnv names the environment variable of a test hook for crash tests, read only by a
// binary built with the build tag sluicetest (cmd/sluice's tests build it so): with
// SLUICE_TEST_ICEBERG_PAUSE=100ms every Commit pauses that long at each of its steps (the
// epoch's data files and manifests are written but not committed; the catalog has committed
// but the reply is not yet used), as does a schema change mid-run once the catalog has it
// (evolve.go), and writes "iceberg-pause STEP" and "iceberg-resume STEP"
// lines to stderr, so that a SIGKILL lands there and the test can tell where it landed.
const PauseEnv = "SLUICE_TEST_ICEBERG_PAUSE"
