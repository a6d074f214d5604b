// Package generator is the StreamingDataGenerator source: Google's Dataflow Streaming Data
// Generator as a sluice source. It renders a faker template (JSON text with {{function(...)}}
// placeholders, the syntax of the JSON Data Generator library that Google's template uses),
// or a built-in one such as GAME_EVENT, into one message per offset, paced to a rate, and emits
// the messages as typed rows whose schema is inferred from sample renderings.
//
// Every message is a pure function of the seed and its offset, so a pipeline that resumes
// from a checkpoint regenerates exactly the messages it would have read. docs/generator.md
// describes the functions, pacing, times and determinism.
package generator
