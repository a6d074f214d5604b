// Package templates renders pipeline files before they are parsed: Jinja (as Beam YAML does,
// with --jinja_variables) and Dataflow-style templates, whose `template:` header declares typed
// parameters. Parameters are validated before rendering, a value can never change the
// pipeline's structure, and secret values are masked in everything shown. See docs/templates.md.
package templates
