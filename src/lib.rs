//! Anonymization of personal microdata by generalization and suppression.
//!
//! Layers, each with one job, and data flowing one way (bytes → `codec` → encoded table → `core` →
//! outcome → `codec` → bytes):
//! - [`core`]: the pure engine. No async, no I/O, no clock; callers pass a `Control` for cancellation and
//!   progress.
//! - [`codec`]: CSV and hierarchy files to and from encoded tables.
//! - [`domain`]: the job specification shared by the CLI and the service, validated at the edge.
//! - [`cli`]: the command line, running the same engine on local files.
//! - [`store`]: the only place with SQL (PostgreSQL in production, SQLite as the embedded default).
//! - [`http`]: the REST API (validate, persist, enqueue; never compute).
//! - [`worker`]: the only place that turns a queued job into an engine run (claims, leases, heartbeats).
//! - [`synthetic`]: seeded generators of benchmark tables (adult-shaped at any size).
//! - [`tables`], [`hierarchy_refs`]: stored datasets and hierarchies turned into engine inputs.
//! - [`app`], [`config`], [`telemetry`] (logs, and the Prometheus metrics of `GET /metrics`): the service
//!   process.
//! - [`error_code`]: the one list of stable error codes, shared by every layer that reports errors.
//! - [`audit`]: the audit trail of data operations; [`private_fs`]: files created private.

pub mod app;
pub mod audit;
pub mod cli;
pub mod codec;
pub mod config;
pub mod core;
pub mod domain;
pub mod error_code;
pub mod frame_reader;
pub mod hierarchy_refs;
pub mod http;
pub mod private_fs;
pub mod report_page;
pub mod retention;
pub mod store;
pub mod synthetic;
pub mod tables;
pub mod telemetry;
pub mod webhooks;
pub mod worker;
