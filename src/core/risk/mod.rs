//! Re-identification risk analysis, as ARX reports it (Prasser et al., ARX's `org.deidentifier.arx.risk`
//! package is the reference for what is computed; the formulas come from the papers each file cites).
//!
//! Everything reads the class-size frequencies of a table ([`ClassSizes`]): records grouped by their
//! quasi-identifier values, suppressed records left out. One file per job:
//! - `classes`: grouping records into classes and counting class sizes;
//! - `prosecutor`: prosecutor risk and sample uniques;
//! - `journalist`: journalist and marketer risk against population class sizes;
//! - `zayatz`, `pitman`, `snb`: population-uniqueness models; `uniqueness`: Dankar et al.'s rule;
//! - `special`: ln Γ and digamma;
//! - `histogram`: the class-size distribution in fixed bins;
//! - `profile`: the whole profile of one table.

pub mod classes;
pub mod histogram;
pub mod journalist;
pub mod pitman;
pub mod profile;
pub mod prosecutor;
pub mod snb;
pub mod special;
pub mod uniqueness;
pub mod zayatz;

pub use classes::{ClassSizes, KeyColumn};
pub use histogram::{class_size_bins, ClassSizeBin};
pub use journalist::MatchedClass;
pub use profile::{RiskProfile, RiskSettings};
pub use prosecutor::{prosecutor_risk, ProsecutorRisk, DEFAULT_THRESHOLD};
pub use uniqueness::{population_unique_share, UniquenessModel};
