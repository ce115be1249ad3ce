-- Kept in step with migrations/postgres/0003_chunk_storage.sql, which changes PostgreSQL's storage of
-- chunk bytes; SQLite stores blobs uncompressed already, so there is nothing to change here.
select 1;
