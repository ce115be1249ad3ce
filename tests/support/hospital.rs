//! A synthetic hospital table for the proposal tests: 300 patients with a record number, a name, a birth
//! date, a ZIP code, a sex and a diagnosis.

/// The table as CSV (`,`).
pub fn hospital_csv() -> String {
    let mut csv = String::from("mrn,name,birth_date,zip,sex,diagnosis\n");
    for i in 0..300usize {
        csv.push_str(&format!(
            "MRN{:06},Patient {i},19{:02}-{:02}-{:02},{},{},{}\n",
            100_003 * i % 1_000_000,
            30 + i % 60,
            1 + i % 12,
            1 + (i * 7) % 28,
            8000 + (i * 13) % 50,
            ["F", "M"][i % 2],
            ["I21.4", "J18.9", "E11.9", "I10", "C50.9"][i % 5],
        ));
    }
    csv
}
