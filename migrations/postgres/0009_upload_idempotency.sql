-- Uploads honour Idempotency-Key: a dataset or hierarchy stored under a key remembers it with a
-- fingerprint of the request (its parameters and body), so that a retried upload returns what was stored
-- instead of storing it twice, and the same key with another request is refused. A dataset's key is set
-- when it is published, so a staged upload holds none.
alter table dataset add column idempotency_key text;
alter table dataset add column request_hash text;
create unique index dataset_idempotency on dataset (tenant_id, idempotency_key)
    where idempotency_key is not null;
alter table hierarchy add column idempotency_key text;
alter table hierarchy add column request_hash text;
create unique index hierarchy_idempotency on hierarchy (tenant_id, idempotency_key)
    where idempotency_key is not null;
