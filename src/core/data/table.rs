//! The encoded microdata table: column-major `u32` codes plus one dictionary per column.
//! After loading, no cell is held as a `String`.

use super::dictionary::Dictionary;

/// One dictionary-encoded column.
#[derive(Debug, Clone)]
pub struct Column {
    /// Column name from the header.
    pub name: String,
    /// Distinct values of the column.
    pub dictionary: Dictionary,
    /// One code per record, in record order.
    pub codes: Vec<u32>,
}

impl Column {
    /// Number of records per distinct value, indexed by code.
    pub fn value_counts(&self) -> Vec<u64> {
        let mut counts = vec![0u64; self.dictionary.len()];
        for &c in &self.codes {
            counts[c as usize] += 1;
        }
        counts
    }

    /// Heap bytes held: the codes' capacity, the dictionary and the name.
    pub fn heap_bytes(&self) -> usize {
        self.codes.capacity() * std::mem::size_of::<u32>()
            + self.dictionary.heap_bytes()
            + self.name.capacity()
    }
}

/// A table of equally long encoded columns.
#[derive(Debug, Clone, Default)]
pub struct Table {
    columns: Vec<Column>,
    rows: usize,
}

impl Table {
    /// Heap bytes held by all columns (what caching the table costs).
    pub fn heap_bytes(&self) -> usize {
        self.columns.iter().map(Column::heap_bytes).sum::<usize>()
            + self.columns.capacity() * std::mem::size_of::<Column>()
    }

    /// Builds a table; every column must hold `rows` codes.
    pub fn new(columns: Vec<Column>, rows: usize) -> Self {
        debug_assert!(columns.iter().all(|c| c.codes.len() == rows));
        Self { columns, rows }
    }

    /// Replaces column `index` by `column` (which must hold as many codes).
    pub fn replace_column(&mut self, index: usize, column: Column) {
        debug_assert_eq!(column.codes.len(), self.rows);
        self.columns[index] = column;
    }

    /// Builds a table from string rows (tests and small tools).
    pub fn from_rows(header: &[&str], rows: &[Vec<&str>]) -> Self {
        let mut columns: Vec<Column> = header
            .iter()
            .map(|name| Column {
                name: (*name).to_string(),
                dictionary: Dictionary::new(),
                codes: Vec::with_capacity(rows.len()),
            })
            .collect();
        for row in rows {
            for (column, cell) in columns.iter_mut().zip(row) {
                let code = column.dictionary.intern(cell);
                column.codes.push(code);
            }
        }
        Self::new(columns, rows.len())
    }

    /// Number of records.
    pub fn row_count(&self) -> usize {
        self.rows
    }

    /// All columns in header order.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The column at `index`.
    pub fn column(&self, index: usize) -> &Column {
        &self.columns[index]
    }

    /// The records whose `keep` flag is set, in order, with the same dictionaries (every code keeps its
    /// value, so hierarchies bound to this table fit the result).
    pub fn keep_rows(&self, keep: &[bool]) -> Table {
        debug_assert_eq!(keep.len(), self.rows);
        let rows = keep.iter().filter(|&&k| k).count();
        let columns = self
            .columns
            .iter()
            .map(|c| Column {
                name: c.name.clone(),
                dictionary: c.dictionary.clone(),
                codes: c
                    .codes
                    .iter()
                    .zip(keep)
                    .filter(|(_, &k)| k)
                    .map(|(&code, _)| code)
                    .collect(),
            })
            .collect();
        Table::new(columns, rows)
    }

    /// Index of the column called `name`.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
}
