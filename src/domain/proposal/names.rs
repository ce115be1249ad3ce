//! What a column's name says about it: the name is split into lowercase tokens (at every character that
//! is not a letter or digit, between a lowercase letter and an uppercase one, and between letters and
//! digits, so `birthDate`, `birth_date` and `Birth Date` read alike, and `ICD10` is `icd`, `10`) and the tokens, or pairs of neighbouring tokens, are looked
//! up in three short lists: direct identifiers, demographic quasi-identifiers, and sensitive facts.
//! The lists follow the identifiers of the HIPAA Safe Harbor method (45 CFR 164.514(b)(2)) and the
//! demographic attributes of the re-identification literature (ZIP code, birth date, sex).

/// What a name suggests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameHint {
    /// A direct identifier (name, record number, contact detail).
    Identifier,
    /// A demographic quasi-identifier.
    QuasiIdentifier,
    /// A sensitive fact (diagnosis, income).
    Sensitive,
}

const IDENTIFIERS: &[&str] = &[
    "mrn",
    "name",
    "firstname",
    "lastname",
    "surname",
    "forename",
    "fullname",
    "givenname",
    "email",
    "mail",
    "phone",
    "telephone",
    "tel",
    "mobile",
    "fax",
    "ssn",
    "passport",
    "address",
    "street",
    "iban",
    "account",
    "id",
    "uuid",
    "guid",
    "ip",
    "url",
    "nhs",
    "medicare",
    "license",
    "licence",
    "patientid",
    "recordid",
    "ahv",
    "insurance",
];

const QUASI_IDENTIFIERS: &[&str] = &[
    "age",
    "sex",
    "gender",
    "birth",
    "birthdate",
    "birthday",
    "dob",
    "born",
    "zip",
    "zipcode",
    "postcode",
    "postal",
    "plz",
    "race",
    "ethnicity",
    "ethnic",
    "marital",
    "education",
    "occupation",
    "profession",
    "job",
    "nationality",
    "country",
    "city",
    "region",
    "county",
    "municipality",
    "native",
    "religion",
    "language",
    "workclass",
];

const SENSITIVE: &[&str] = &[
    "diagnosis",
    "diagnoses",
    "disease",
    "icd",
    "condition",
    "illness",
    "treatment",
    "medication",
    "drug",
    "procedure",
    "salary",
    "income",
    "outcome",
    "hiv",
    "cancer",
    "disorder",
];

/// The lowercase tokens of a column name.
pub fn tokens(name: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut previous: Option<char> = None;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                tokens.push(std::mem::take(&mut current));
            }
            previous = None;
            continue;
        }
        let boundary = previous.is_some_and(|p| {
            (p.is_lowercase() && c.is_uppercase()) || (p.is_numeric() != c.is_numeric())
        });
        if boundary && !current.is_empty() {
            tokens.push(std::mem::take(&mut current));
        }
        previous = Some(c);
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        tokens.push(current);
    }
    tokens
}

/// What the name suggests, if anything: identifiers first (a `patient_name` is an identifier, not a
/// demographic), then quasi-identifiers, then sensitive facts.
pub fn hint(name: &str) -> Option<NameHint> {
    let tokens = tokens(name);
    let pairs: Vec<String> = tokens.windows(2).map(|w| w.concat()).collect();
    let any = |list: &[&str]| {
        tokens
            .iter()
            .chain(&pairs)
            .any(|t| list.contains(&t.as_str()))
    };
    if any(IDENTIFIERS) {
        Some(NameHint::Identifier)
    } else if any(QUASI_IDENTIFIERS) {
        Some(NameHint::QuasiIdentifier)
    } else if any(SENSITIVE) {
        Some(NameHint::Sensitive)
    } else {
        None
    }
}

/// Whether the name suggests a postal code (masked from the right rather than cut into intervals).
pub fn is_postal_code(name: &str) -> bool {
    let tokens = tokens(name);
    let pairs: Vec<String> = tokens.windows(2).map(|w| w.concat()).collect();
    tokens.iter().chain(&pairs).any(|t| {
        ["zip", "zipcode", "postcode", "postal", "postalcode", "plz"].contains(&t.as_str())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_split_into_tokens() {
        assert_eq!(tokens("birthDate"), ["birth", "date"]);
        assert_eq!(tokens("Birth Date"), ["birth", "date"]);
        assert_eq!(tokens("native-country"), ["native", "country"]);
        assert_eq!(tokens("ZIP"), ["zip"]);
        assert_eq!(tokens("e_mail2"), ["e", "mail", "2"]);
        assert_eq!(tokens("ICD10"), ["icd", "10"]);
    }

    #[test]
    fn hints_follow_the_lists() {
        for name in [
            "mrn",
            "name",
            "patient_name",
            "Email",
            "phone_number",
            "PatientID",
            "first name",
        ] {
            assert_eq!(hint(name), Some(NameHint::Identifier), "{name}");
        }
        for name in [
            "age",
            "sex",
            "birth_date",
            "dob",
            "zip",
            "Postal Code",
            "marital-status",
            "race",
        ] {
            assert_eq!(hint(name), Some(NameHint::QuasiIdentifier), "{name}");
        }
        for name in ["diagnosis", "ICD10", "salary-class", "treatment"] {
            assert_eq!(hint(name), Some(NameHint::Sensitive), "{name}");
        }
        assert_eq!(hint("e_mail2"), Some(NameHint::Identifier));
        assert_eq!(hint("fnlwgt"), None);
        assert_eq!(hint("hours-per-week"), None);
        assert!(is_postal_code("zip_code") && is_postal_code("PLZ") && !is_postal_code("zipper"));
    }
}
