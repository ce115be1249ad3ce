//! The anonymization engine. Pure: it sees encoded tables, a resolved [`engine::Plan`] and a
//! [`control::Control`]; it reads no clock, environment, file or network.

pub mod calendar;
pub mod control;
pub mod data;
pub mod differential;
pub mod engine;
pub mod error;
pub mod fragmentation;
pub mod groupify;
pub mod hex;
pub mod identifiers;
pub mod input;
pub mod key_groups;
pub mod key_numbering;
pub mod lattice;
pub mod local;
pub mod loss;
pub mod measures;
pub mod privacy;
pub mod render;
pub mod risk;
pub mod rng;
pub mod search;
pub mod secret_rng;
