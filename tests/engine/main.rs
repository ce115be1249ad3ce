//! The engine suite: the algorithms, privacy models and measures on hand-computed tables, the bundled
//! datasets' reference results, and property tests against exhaustive oracles. No database, no server.

#[path = "../support/mod.rs"]
mod support;

mod anytime;
mod arx_metrics;
mod candidates;
mod control;
mod golden_adult;
mod golden_sensitive;
mod issa_examples;
mod local_recoding;
mod properties;
mod published;
mod responsiveness;
