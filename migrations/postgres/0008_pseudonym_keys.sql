-- Each tenant's pseudonym keys (HMAC-SHA-256 secrets of the `pseudonym` identifier operator), created on the
-- tenant's first job that asks for pseudonyms. Rotation retires the current key (retired_at) and adds the
-- next version; a retired key is kept for the record but never used again. The secret is never returned by
-- the API nor written to a log; the fingerprint (a hash of it) is what reports and the API show.
create table pseudonym_key (
    tenant_id text not null references tenant (id),
    version bigint not null,
    secret bytea not null,
    fingerprint text not null,
    created_at bigint not null,
    retired_at bigint,
    primary key (tenant_id, version)
);
