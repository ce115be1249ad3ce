//! The one list of stable error codes. Every problem the service answers, every job failure it stores
//! and every error the CLI prints carries one of these; the HTTP layer renders them as the `code` of
//! problem+json, and `openapi.yaml` lists exactly these (checked by a test).

use std::fmt;

use crate::core::error::CoreError;

/// Declares [`ErrorCode`] with its wire name per variant, and [`ErrorCode::ALL`].
macro_rules! error_codes {
    ($($(#[doc = $doc:literal])* $variant:ident = $name:literal,)*) => {
        /// A stable snake_case error code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum ErrorCode {
            $($(#[doc = $doc])* $variant,)*
        }

        impl ErrorCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// The wire name (`"invalid_k"`).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $name,)*
                }
            }
        }
    };
}

error_codes! {
    /// The request is malformed in a way no more specific code names (400).
    BadRequest = "bad_request",
    /// The body is not syntactically valid JSON (400).
    MalformedJson = "malformed_json",
    /// A query parameter or cursor is invalid (400).
    InvalidQuery = "invalid_query",
    /// The job published no such fragment (404).
    UnknownFragment = "unknown_fragment",
    /// No valid API key was presented (401).
    Unauthorized = "unauthorized",
    /// No such resource for this tenant (404).
    NotFound = "not_found",
    /// The route does not accept this method (405).
    MethodNotAllowed = "method_not_allowed",
    /// The upload body arrived too slowly (408).
    UploadTimeout = "upload_timeout",
    /// The resource changed concurrently or is in the wrong state (409).
    Conflict = "conflict",
    /// An idempotency key was reused with a different request (409).
    IdempotencyConflict = "idempotency_conflict",
    /// The job was cancelled (409 on routes that need a finished job).
    Cancelled = "cancelled",
    /// The job has no output because it did not succeed (409).
    JobNotSucceeded = "job_not_succeeded",
    /// A stored hierarchy cannot be deleted while a queued or running job references it (409).
    HierarchyInUse = "hierarchy_in_use",
    /// The body exceeds its size limit (413).
    PayloadTooLarge = "payload_too_large",
    /// The body has the wrong content type (415).
    UnsupportedMediaType = "unsupported_media_type",
    /// Too many uploads are in progress for this tenant (429).
    TooManyUploads = "too_many_uploads",
    /// The spec does not fit the schema (a wrong type, an unknown field).
    InvalidSpec = "invalid_spec",
    /// The CSV delimiter is not a single byte (or `\\t`), or it differs from the upload's.
    InvalidDelimiter = "invalid_delimiter",
    /// The character encoding is unknown or unsupported.
    InvalidEncoding = "invalid_encoding",
    /// A `strict` job has warnings (probable mistakes); in strict mode they are errors.
    StrictWarnings = "strict_warnings",
    /// The table reads as one column whose name holds another delimiter: the delimiter is wrong.
    DelimiterMismatch = "delimiter_mismatch",
    /// A hierarchy is malformed or cannot be read.
    InvalidHierarchy = "invalid_hierarchy",
    /// `k` is out of range.
    InvalidK = "invalid_k",
    /// `l` is out of range.
    InvalidL = "invalid_l",
    /// `c` is out of range.
    InvalidC = "invalid_c",
    /// A model names an attribute that is not declared sensitive.
    NotSensitive = "not_sensitive",
    /// `d` is out of range.
    InvalidD = "invalid_d",
    /// `mu` is out of range.
    InvalidMu = "invalid_mu",
    /// `r` is out of range.
    InvalidR = "invalid_r",
    /// `delta` is out of range.
    InvalidDelta = "invalid_delta",
    /// `t` is out of range.
    InvalidT = "invalid_t",
    /// `beta` is out of range.
    InvalidBeta = "invalid_beta",
    /// An ordering of values is invalid.
    InvalidOrder = "invalid_order",
    /// `max_categories` is out of range.
    InvalidMaxCategories = "invalid_max_categories",
    /// An attribute has more categories than the exact checks can handle.
    TooManyCategories = "too_many_categories",
    /// Don't-care values overlap in a way the model cannot check exactly.
    DontCareOverlap = "dont_care_overlap",
    /// A class function is invalid.
    InvalidClassFunction = "invalid_class_function",
    /// A column that must be numeric holds a non-numeric value.
    NotNumeric = "not_numeric",
    /// A `date` or `datetime` quasi-identifier holds values that are no ISO dates (or date-times).
    NotDate = "not_date",
    /// `suppression_limit` is outside [0, 1].
    InvalidSuppressionLimit = "invalid_suppression_limit",
    /// The query workload is invalid.
    InvalidQueryWorkload = "invalid_query_workload",
    /// `k` is larger than the table.
    KExceedsRows = "k_exceeds_rows",
    /// A quasi-identifier needs a hierarchy and has none.
    MissingHierarchy = "missing_hierarchy",
    /// The spec names no privacy model.
    MissingPrivacyModel = "missing_privacy_model",
    /// No column is declared a quasi-identifier.
    NoQuasiIdentifier = "no_quasi_identifier",
    /// A hierarchy misses values of its column.
    UncoveredValues = "uncovered_values",
    /// A column of the dataset has no role in the spec.
    UndeclaredColumn = "undeclared_column",
    /// The spec names a column the dataset does not have.
    UnknownColumn = "unknown_column",
    /// The spec names a stored hierarchy that does not exist.
    UnknownHierarchy = "unknown_hierarchy",
    /// The spec names a dataset that does not exist.
    UnknownDataset = "unknown_dataset",
    /// The request is invalid for a reason the detail explains.
    InvalidRequest = "invalid_request",
    /// A risk threshold is out of range.
    InvalidThreshold = "invalid_threshold",
    /// A sampling fraction is out of range.
    InvalidSamplingFraction = "invalid_sampling_fraction",
    /// The population is smaller than the table.
    PopulationTooSmall = "population_too_small",
    /// The population is given in two conflicting ways.
    ConflictingPopulation = "conflicting_population",
    /// The upload is empty.
    EmptyBody = "empty_body",
    /// The CSV has a header but no records.
    NoRecords = "no_records",
    /// A header field is empty.
    EmptyColumnName = "empty_column_name",
    /// Two header fields have the same name.
    DuplicateColumn = "duplicate_column",
    /// A record has a different number of fields than the header.
    RaggedRow = "ragged_row",
    /// The CSV is not valid UTF-8.
    InvalidUtf8 = "invalid_utf8",
    /// The CSV cannot be parsed.
    MalformedCsv = "malformed_csv",
    /// A quoted field is never closed (the line where it opened is given).
    UnterminatedQuote = "unterminated_quote",
    /// Text follows the closing quote of a field.
    TextAfterQuote = "text_after_quote",
    /// A carriage return outside a line ending or quoted field.
    StrayCarriageReturn = "stray_carriage_return",
    /// A field exceeds the field length limit.
    FieldTooLong = "field_too_long",
    /// A NUL or other control character where none is allowed.
    InvalidCharacters = "invalid_characters",
    /// The engine refused a parameter.
    InvalidParameter = "invalid_parameter",
    /// The table has fewer records than the models need.
    TooFewRecords = "too_few_records",
    /// The generalization lattice exceeds the search's limit.
    LatticeTooLarge = "lattice_too_large",
    /// No transformation satisfies the privacy models within the limits.
    NoSolution = "no_solution",
    /// The job is expected to need more memory than the budget allows.
    MemoryBudgetExceeded = "memory_budget_exceeded",
    /// An internal error; the request id identifies it in the logs (500).
    InternalError = "internal_error",
    /// The request did not complete in time (408 or 503).
    Timeout = "timeout",
    /// A dependency (the database) is unavailable (503).
    Unavailable = "unavailable",
    /// The server takes no more uploads at once; retry after the given time (503).
    ServerBusy = "server_busy",
    /// The server has no PDF renderer configured (501).
    PdfUnavailable = "pdf_unavailable",
    /// The population table lacks a column the assessment needs.
    MissingInPopulation = "missing_in_population",
    /// A value order misses values of its column.
    IncompleteOrder = "incomplete_order",
    /// A name in `split_preference` is not a quasi-identifier.
    UnknownQuasiIdentifier = "unknown_quasi_identifier",
    /// A quasi-identifier is listed twice.
    DuplicateQuasiIdentifier = "duplicate_quasi_identifier",
    /// The algorithm does not support this privacy model.
    UnsupportedModel = "unsupported_model",
    /// A functional dependency is invalid.
    InvalidDependency = "invalid_dependency",
    /// An option does not apply to the chosen algorithm.
    UnsupportedOption = "unsupported_option",
    /// A pseudonym operator without a key (the CLI's `--pseudonym-key-file` or
    /// `ANONYMIZER_PSEUDONYM_KEY`), or a key the operator cannot use.
    PseudonymKeyMissing = "pseudonym_key_missing",
    /// A model that reads a population table (`k_map` without an estimator, `delta_presence`) without
    /// one (the service's `population_dataset_id`, the CLI's `--population`), or a population given to a
    /// job none of whose models reads it.
    PopulationMissing = "population_missing",
    /// Some combination of quasi-identifier values holds more records in the table than in its
    /// population table: the population must contain the table's individuals.
    SampleNotInPopulation = "sample_not_in_population",
    /// A published table misses a column, or a cell that is neither a value, a hierarchy label, a range
    /// of its column's values nor `*`, or more rows than its original.
    PublishedUnreadable = "published_unreadable",
    /// Rows of a published table cannot be paired with original records whose values they cover.
    PublishedUnpaired = "published_unpaired",
    /// Writing output failed.
    WriteFailed = "write_failed",
    /// The job ran past its deadline.
    DeadlineExceeded = "deadline_exceeded",
    /// A job's callback URL is malformed or not allowed by the server's webhook allowlist (422).
    CallbackNotAllowed = "callback_not_allowed",
    /// The tenant has as many event streams open as it may (429).
    TooManyStreams = "too_many_streams",
    /// A `Last-Event-ID` that is not an event id of this service (400).
    InvalidLastEventId = "invalid_last_event_id",
}

impl ErrorCode {
    /// The code of an engine error. `Cancelled` is the caller's own stop request, and a failing random
    /// source is the machine's fault: callers decide what those mean for them (a 409, an internal error).
    pub fn of_core(error: &CoreError) -> Self {
        match error {
            CoreError::InvalidParameter { .. } => ErrorCode::InvalidParameter,
            CoreError::TooFewRecords { .. } => ErrorCode::TooFewRecords,
            CoreError::LatticeTooLarge { .. } => ErrorCode::LatticeTooLarge,
            CoreError::NoSolution { .. } => ErrorCode::NoSolution,
            CoreError::Cancelled => ErrorCode::Cancelled,
            CoreError::RandomnessUnavailable { .. } => ErrorCode::InternalError,
        }
    }

    /// The code with this wire name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| c.as_str() == name)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_snake_case_and_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for &code in ErrorCode::ALL {
            let name = code.as_str();
            assert!(seen.insert(name), "{name} twice");
            assert!(
                name.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{name} is not snake_case"
            );
            assert_eq!(ErrorCode::from_name(name), Some(code));
            assert_eq!(code.to_string(), name);
        }
        assert_eq!(ErrorCode::from_name("no_such_code"), None);
    }
}
