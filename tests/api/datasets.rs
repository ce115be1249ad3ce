//! Tests of /v1/datasets.
