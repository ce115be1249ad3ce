//! The service suite without the binary: the store, the workers, the audit trail and readiness, each on
//! a real SQLite file and a real PostgreSQL database (TEST_DATABASE_URL, default
//! postgres://postgres@127.0.0.1:5432/postgres; a fresh database per test, dropped afterwards).

#[path = "../support/database.rs"]
mod database;

mod audit;
mod readiness;
mod store;
mod worker;
