//! Tests of /v1/hierarchies.
