//! kiln-conformance
