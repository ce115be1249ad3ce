//! Vertical fragmentation for high-dimensional data (Zakerzadeh, Aggarwal & Barker, "Towards Breaking
//! the Curse of Dimensionality for High-Dimensional Privacy"): the features are split into fragments that
//! share only the class column, each fragment is anonymized on its own, and joins of fragments on the
//! class are repaired. Implementation notes: `zakerzadeh-high-dimensional-vertical-fragmentation.md`.
//!
//! Files: [`mutual_information`] (the plug-in estimator, equal-frequency discretization and the MI
//! matrix of §3.2), [`fmrmr`] (the FMRMR criterion of §2.3 and fragment construction, Algorithm 1
//! with the note's fixes, §3.3), [`reconstruction`] (the non-reconstructability condition of
//! Theorem 4.1, checked over every subset of fragments), [`repair`] (the Naive and DGBE repairs,
//! §3.6–§3.7), [`selectivity`] (η, Def. 4.4 computed exactly, and the δ-selective repair,
//! Algorithm 4), [`apply`] (changes applied to records, and the information loss of §5.3) and
//! [`pipeline`] (Mondrian per fragment, the repair, the join check).

pub mod apply;
pub mod fmrmr;
pub mod mutual_information;
pub mod pipeline;
pub mod reconstruction;
pub mod repair;
pub mod selectivity;
