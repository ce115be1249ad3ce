//! The workers: claim queued jobs and run them on the engine.
