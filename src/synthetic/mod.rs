//! Seeded generators of synthetic tables for tests and benchmarks.

pub mod dependencies;
