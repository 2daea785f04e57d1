// Package convert translates between the SDK's public Go types and the generated
// protobuf types, and between typed errors and gRPC statuses. The generated types
// never leave the SDK; every kind package's gRPC shims go through here for what the
// kinds share (papers, Describe, Configure, errors).
package convert
