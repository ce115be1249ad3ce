//! Measures of a table or of a run's output, shared by job reports and assessments: information loss,
//! re-identification risk, the privacy achieved on sensitive attributes, and the ψ security estimate;
//! and the assessment of a table as it is.

pub mod achieved;
pub mod assessment;
pub mod candidates;
pub mod classification;
pub mod dependencies;
pub mod hierarchy_preview;
pub mod loss_measures;
pub mod published;
pub mod risk;
pub mod security_estimate;
pub mod warnings;
