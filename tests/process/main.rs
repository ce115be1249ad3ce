//! The process suite: the real `anonymizer` binary, as a command line tool and as a server (crashes,
//! restarts, hostile load, end-to-end jobs), on both stores.

#[path = "../support/csv_battery.rs"]
mod csv_battery;
#[path = "../support/database.rs"]
mod database;
#[path = "../support/hospital.rs"]
mod hospital;
#[path = "../support/mod.rs"]
mod support;

mod cli;
mod crash;
mod e2e;
mod generated_client;
mod hostile;
mod local_server;
mod readme;
mod report_browser;
mod serve;
mod tools;
mod webhooks;
