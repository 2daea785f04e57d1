// Package sdk is what a Lectern plugin author imports: the plugin protocol, one Go
// interface per plugin kind, Serve helpers and a conformance kit.
//
// The SDK is its own module (github.com/lectern-research/lectern/sdk) so that a
// plugin depends on it alone and never on the host. Its packages promise semantic
// versioning once tagged sdk/v1.0.0.
package sdk
