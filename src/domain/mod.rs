//! Types shared by the CLI and the service: the job specification (validated at the edge into an engine
//! plan) and the report of a finished run.

pub mod achieved;
pub mod assessment;
mod closeness;
mod column_values;
mod likeness;
pub mod local_output;
pub mod local_plan;
pub mod local_run;
pub mod loss_measures;
pub mod memory;
pub mod pipeline;
pub mod prepare;
pub mod report;
pub mod risk;
pub mod security_estimate;
pub mod spec;
pub mod verify;
mod verify_sensitive;

pub use prepare::{prepare, HierarchyResolver, Prepared};
pub use report::Report;
pub use spec::{JobSpec, SpecError};
