//! Types and steps shared by the CLI and the service, one folder per stage of a job:
//! - [`spec`]: the job specification as JSON (serde types, JSON-pointer errors, collected problems);
//! - [`builders`]: hierarchies built from parameters (intervals, orders, masks, dates, categories);
//! - [`models`]: the privacy-model registry, one file per model (its spec type, validation, engine
//!   criterion, verifier requirement and report inputs);
//! - [`resolve`]: a spec and a loaded table → what the engine runs (hierarchies bound, models resolved
//!   through the registry, local-recoding options), with the independent requirements the verifier checks;
//! - [`run`]: one run of a resolved job, full-domain or local recoding, and the memory it needs;
//! - [`verify`]: the independent checks of an output before it may be published;
//! - [`analysis`]: measures of a table or an output (loss, risk, achieved privacy, security estimate)
//!   and the assessment of a table as it is;
//! - [`report`]: the report of a finished run.

pub mod analysis;
pub mod builders;
mod column_values;
pub mod dates;
pub mod fragmentation;
pub mod models;
pub mod proposal;
pub mod report;
pub mod resolve;
pub mod run;
pub mod spec;
pub mod verify;

pub use report::Report;
pub use resolve::{prepare, prepare_with, HierarchyResolver, JobKind, Prepared, Resolved};
pub use spec::{JobSpec, Problems, SpecError};
