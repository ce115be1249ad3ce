//! The memory a job is expected to need, so that a job too large for the service's budget is refused
//! at submission instead of taking the process down mid-run.
//!
//! The model is an upper bound fitted to peak resident memory measured with `/usr/bin/time` on the CLI
//! (adult's nine quasi-identifiers, k = 5, 4 % suppression, the exact search; docs/benchmarks.md "Memory per record"):
//! 30,162 records peaked at 29 MiB, 100,000 at 45 MiB, 1,000,000 at 107 MiB. The job holds the encoded
//! table ([`Table::heap_bytes`]); the engine adds per record a class id and a group slot per lattice
//! node in flight, the report its per-record measures and the output its rendered rows — together at most
//! [`BYTES_PER_CELL`] per cell plus [`BYTES_PER_RECORD`] per record over the measurements above, and a
//! fixed [`BASE_BYTES`] for the process, hierarchies and lattice.

use crate::core::data::Table;

/// Fixed part: the process, hierarchies, the lattice and the report.
pub const BASE_BYTES: u64 = 32 << 20;

/// Engine, report and output bytes per cell of the table.
pub const BYTES_PER_CELL: u64 = 16;

/// Engine, report and output bytes per record, whatever its width.
pub const BYTES_PER_RECORD: u64 = 128;

/// Bytes a job on `table` is expected to need at most: the encoded table plus the working set.
pub fn job_memory_estimate(table: &Table) -> u64 {
    let records = table.row_count() as u64;
    let cells = records.saturating_mul(table.columns().len() as u64);
    (table.heap_bytes() as u64)
        .saturating_add(BASE_BYTES)
        .saturating_add(cells.saturating_mul(BYTES_PER_CELL))
        .saturating_add(records.saturating_mul(BYTES_PER_RECORD))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: usize, columns: usize) -> Table {
        let header: Vec<String> = (0..columns).map(|c| format!("c{c}")).collect();
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let values: Vec<Vec<String>> = (0..rows)
            .map(|r| (0..columns).map(|c| ((r + c) % 97).to_string()).collect())
            .collect();
        let rows: Vec<Vec<&str>> = values
            .iter()
            .map(|r| r.iter().map(String::as_str).collect())
            .collect();
        Table::from_rows(&header, &rows)
    }

    #[test]
    fn the_estimate_grows_with_records_and_columns_and_covers_the_measurements() {
        let small = job_memory_estimate(&table(1_000, 9));
        let tall = job_memory_estimate(&table(10_000, 9));
        let wide = job_memory_estimate(&table(1_000, 18));
        assert!(tall > small && wide > small);
        // adult-shaped, 9 columns: 1,000,000 records measured at 107 MiB peak
        let per_record = (tall - small) / 9_000;
        assert!(per_record >= 9 * 4 + 9 * BYTES_PER_CELL + BYTES_PER_RECORD);
        let million = BASE_BYTES + 1_000_000 * per_record;
        assert!(million > 107 << 20, "{million}");
    }
}
