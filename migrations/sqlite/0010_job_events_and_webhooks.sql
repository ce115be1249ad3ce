-- Job events and webhooks. Every change of a job that a client may want pushed is appended to job_event by
-- a trigger, in the transaction that makes the change: its creation and each later change of state or
-- attempt ('state'), a cancel request on a running job ('cancel_requested'), and a new progress
-- ('progress'). Server-sent event streams read it in id order and resume after the id a client last saw
-- (SQLite has one writer at a time, so events commit in id order).
--
-- A job may carry a callback URL; each of its 'state' events then becomes a webhook delivery (same
-- transaction again, so none is lost to a crash), sent by the dispatcher of an API process and retried
-- until it succeeds or its retry window ends; each attempt is recorded. Deliveries are signed with the
-- tenant's webhook secrets (rotation keeps the previous secret signing for a while).
alter table job add column callback_url text;

create table job_event (
    id integer primary key autoincrement,
    tenant_id text not null,
    job_id text not null references job (id) on delete cascade,
    kind text not null check (kind in ('state', 'cancel_requested', 'progress')),
    state text not null,
    attempt bigint not null,
    cancel_requested boolean not null,
    progress_json text,
    failure_code text,
    failure_message text,
    created_at bigint not null
);

create index job_event_tenant on job_event (tenant_id, id);
create index job_event_job on job_event (job_id, id);
-- progress events are pruned by age
create index job_event_progress on job_event (created_at) where kind = 'progress';

create table webhook_delivery (
    event_id bigint primary key references job_event (id) on delete cascade,
    tenant_id text not null,
    job_id text not null,
    url text not null,
    status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
    body text,
    attempts bigint not null default 0,
    next_attempt_at bigint not null,
    created_at bigint not null,
    finished_at bigint
);

create index webhook_delivery_due on webhook_delivery (next_attempt_at) where status = 'pending';
create index webhook_delivery_job on webhook_delivery (job_id, event_id);

create table webhook_attempt (
    event_id bigint not null references webhook_delivery (event_id) on delete cascade,
    seq bigint not null,
    started_at bigint not null,
    duration_ms bigint not null,
    status_code bigint,
    error text,
    primary key (event_id, seq)
);

create table webhook_secret (
    tenant_id text not null references tenant (id) on delete cascade,
    version bigint not null,
    secret blob not null,
    created_at bigint not null,
    retired_at bigint,
    primary key (tenant_id, version)
);

create trigger job_event_on_insert after insert on job
begin
    insert into job_event (tenant_id, job_id, kind, state, attempt, cancel_requested, progress_json,
                           failure_code, failure_message, created_at)
    values (new.tenant_id, new.id, 'state', new.state, new.attempt, new.cancel_requested,
            new.progress_json, new.failure_code, new.failure_message, new.updated_at);
end;

create trigger job_event_on_state after update on job
    when new.state is not old.state or new.attempt is not old.attempt
begin
    insert into job_event (tenant_id, job_id, kind, state, attempt, cancel_requested, progress_json,
                           failure_code, failure_message, created_at)
    values (new.tenant_id, new.id, 'state', new.state, new.attempt, new.cancel_requested,
            new.progress_json, new.failure_code, new.failure_message, new.updated_at);
end;

create trigger job_event_on_cancel after update on job
    when new.state is old.state and new.attempt is old.attempt
         and new.cancel_requested and not old.cancel_requested
begin
    insert into job_event (tenant_id, job_id, kind, state, attempt, cancel_requested, progress_json,
                           failure_code, failure_message, created_at)
    values (new.tenant_id, new.id, 'cancel_requested', new.state, new.attempt, new.cancel_requested,
            new.progress_json, new.failure_code, new.failure_message, new.updated_at);
end;

create trigger job_event_on_progress after update on job
    when new.state is old.state and new.attempt is old.attempt
         and new.cancel_requested is old.cancel_requested
         and new.progress_json is not old.progress_json
begin
    insert into job_event (tenant_id, job_id, kind, state, attempt, cancel_requested, progress_json,
                           failure_code, failure_message, created_at)
    values (new.tenant_id, new.id, 'progress', new.state, new.attempt, new.cancel_requested,
            new.progress_json, new.failure_code, new.failure_message, new.updated_at);
end;

create trigger webhook_delivery_on_event after insert on job_event
    when new.kind = 'state'
begin
    insert into webhook_delivery (event_id, tenant_id, job_id, url, next_attempt_at, created_at)
    select new.id, new.tenant_id, new.job_id, j.callback_url, new.created_at, new.created_at
    from job j where j.id = new.job_id and j.callback_url is not null;
end;
