-- Initial schema (SQLite). Ids are UUID v4 as text, timestamps bigint unix milliseconds, JSON documents
-- text (the store never looks inside them), payloads blobs in chunks of at most 1 MiB. Kept column for column
-- equal to migrations/postgres/0001_initial.sql so both backends share their SQL.

create table tenant (
    id text primary key,
    name text not null unique,
    created_at bigint not null,
    updated_at bigint not null
);

create table api_key (
    id text primary key,
    tenant_id text not null references tenant (id) on delete cascade,
    key_hash text not null unique,
    prefix text not null,
    revoked_at bigint,
    created_at bigint not null,
    updated_at bigint not null
);

create index api_key_tenant on api_key (tenant_id);

create table dataset (
    id text primary key,
    tenant_id text not null references tenant (id) on delete cascade,
    name text not null,
    byte_size bigint not null,
    sha256 text not null,
    row_count bigint not null,
    columns_json text not null,
    chunk_count bigint not null,
    created_at bigint not null,
    updated_at bigint not null
);

create index dataset_tenant_page on dataset (tenant_id, created_at, id);

create table dataset_chunk (
    dataset_id text not null references dataset (id) on delete cascade,
    seq bigint not null,
    bytes blob not null,
    primary key (dataset_id, seq)
);

create table hierarchy (
    id text primary key,
    tenant_id text not null references tenant (id) on delete cascade,
    name text not null,
    content_json text not null,
    created_at bigint not null,
    updated_at bigint not null
);

create index hierarchy_tenant on hierarchy (tenant_id);

create table job (
    id text primary key,
    tenant_id text not null references tenant (id) on delete cascade,
    dataset_id text not null references dataset (id) on delete cascade,
    state text not null check (state in ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    spec_json text not null,
    idempotency_key text,
    request_hash text not null,
    attempt bigint not null default 0,
    lease_owner text,
    lease_expires_at bigint,
    cancel_requested boolean not null default 0,
    progress_json text,
    report_json text,
    output_chunk_count bigint,
    output_byte_size bigint,
    output_sha256 text,
    failure_code text,
    failure_message text,
    created_at bigint not null,
    updated_at bigint not null,
    started_at bigint,
    finished_at bigint,
    unique (tenant_id, idempotency_key)
);

create index job_tenant_page on job (tenant_id, created_at, id);
create index job_dataset on job (dataset_id);
-- the claim scans only live jobs, oldest first
create index job_claimable on job (created_at, id) where state in ('queued', 'running');

create table job_output_chunk (
    job_id text not null references job (id) on delete cascade,
    seq bigint not null,
    bytes blob not null,
    primary key (job_id, seq)
);
