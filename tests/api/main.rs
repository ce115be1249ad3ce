//! Integration suite of the HTTP API on both backends: the real router over real HTTP with a real store.
//! One module per resource; `harness` starts the service.

#![allow(dead_code)]

#[path = "../support/csv_battery.rs"]
mod csv_battery;
#[path = "../support/database.rs"]
mod database;
mod harness;
#[path = "../support/hospital.rs"]
mod hospital;

mod assessments;
mod audit;
mod auth;
mod candidates;
mod datasets;
mod events;
mod fragmentation;
mod guard_rails;
mod hierarchies;
mod jobs;
mod population;
mod private;
mod proposals;
mod pseudonyms;
mod report_page;
mod resources;
