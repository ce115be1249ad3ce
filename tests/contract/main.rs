//! The contract suite: the source's layering rules, the published OpenAPI document and the documentation's examples.

mod architecture;
mod docs;
mod openapi;
