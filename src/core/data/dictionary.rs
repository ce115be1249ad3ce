//! Per-column interning of cell values: every distinct string gets a dense `u32` code,
//! assigned in order of first appearance so that encoding is deterministic.

use rustc_hash::FxHashMap;

/// A bidirectional map between the distinct values of one column and dense codes `0..len`.
#[derive(Debug, Clone, Default)]
pub struct Dictionary {
    values: Vec<Box<str>>,
    codes: FxHashMap<Box<str>, u32>,
}

impl Dictionary {
    /// An empty dictionary.
    pub fn new() -> Self {
        Self::default()
    }

    /// Returns the code of `value`, adding it when it is new.
    pub fn intern(&mut self, value: &str) -> u32 {
        if let Some(&code) = self.codes.get(value) {
            return code;
        }
        let code = self.values.len() as u32;
        let boxed: Box<str> = value.into();
        self.values.push(boxed.clone());
        self.codes.insert(boxed, code);
        code
    }

    /// The code of `value`, if present.
    pub fn code(&self, value: &str) -> Option<u32> {
        self.codes.get(value).copied()
    }

    /// The value behind `code`. Panics only on a code this dictionary never issued.
    pub fn value(&self, code: u32) -> &str {
        &self.values[code as usize]
    }

    /// Number of distinct values.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True when no value was interned.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// All values in code order.
    pub fn values(&self) -> impl Iterator<Item = &str> {
        self.values.iter().map(|v| &**v)
    }

    /// Heap bytes held, counted from capacities: each value is stored twice (in code order and as a hash
    /// key), each copy an allocation of at least [`MIN_ALLOCATION`] bytes; the hash table's buckets count
    /// with their control bytes.
    pub fn heap_bytes(&self) -> usize {
        let text: usize = self
            .values
            .iter()
            .map(|v| 2 * v.len().max(MIN_ALLOCATION))
            .sum();
        let slots = std::mem::size_of::<Box<str>>() * self.values.capacity();
        let buckets = self.codes.capacity().next_power_of_two().max(1) * 8 / 7;
        let table = buckets * (std::mem::size_of::<(Box<str>, u32)>() + 1);
        text + slots + table
    }
}

/// The smallest block the allocator hands out for a short string, overhead included.
pub const MIN_ALLOCATION: usize = 32;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_first_appearance() {
        let mut d = Dictionary::new();
        assert_eq!(d.intern("b"), 0);
        assert_eq!(d.intern("a"), 1);
        assert_eq!(d.intern("b"), 0);
        assert_eq!(d.len(), 2);
        assert_eq!(d.value(1), "a");
        assert_eq!(d.code("a"), Some(1));
        assert_eq!(d.code("c"), None);
    }

    #[test]
    fn heap_bytes_count_both_copies_of_every_value() {
        let mut d = Dictionary::new();
        let empty = d.heap_bytes();
        for i in 0..1000 {
            d.intern(&format!("value-{i:040}"));
        }
        // 1000 values of 46 bytes, twice, plus the slots and the table
        assert!(d.heap_bytes() >= empty + 2 * 1000 * 46 + 16 * 1000 + 24 * 1000);
        assert!(d.heap_bytes() < 4 * (2 * 1000 * 46 + 16 * 1000 + 24 * 1000));
    }
}
