//! Tests of /v1/jobs.
