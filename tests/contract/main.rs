//! The contract suite: the source's layering rules and the published OpenAPI document.

mod architecture;
mod openapi;
