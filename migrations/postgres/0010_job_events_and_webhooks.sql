-- Job events and webhooks. Every change of a job that a client may want pushed is appended to job_event by
-- a trigger, in the transaction that makes the change: its creation and each later change of state or
-- attempt ('state'), a cancel request on a running job ('cancel_requested'), and a new progress
-- ('progress'). Server-sent event streams read it in id order and resume after the id a client last saw.
-- So that a reader never skips an event committed late, the trigger takes a transaction-scoped advisory
-- lock before it draws the id: events commit in id order (the writes that produce them are single
-- statements or end their transaction, so the lock is held for moments).
--
-- A job may carry a callback URL; each of its 'state' events then becomes a webhook delivery (same
-- transaction again, so none is lost to a crash), sent by the dispatcher of an API process and retried
-- until it succeeds or its retry window ends; each attempt is recorded. Deliveries are signed with the
-- tenant's webhook secrets (rotation keeps the previous secret signing for a while).
alter table job add column callback_url text;

create table job_event (
    id bigserial primary key,
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
    secret bytea not null,
    created_at bigint not null,
    retired_at bigint,
    primary key (tenant_id, version)
);

create function job_event_record() returns trigger language plpgsql as $$
declare
    event_kind text;
    event_id bigint;
begin
    if tg_op = 'INSERT' or new.state is distinct from old.state or new.attempt is distinct from old.attempt then
        event_kind := 'state';
    elsif new.cancel_requested and not old.cancel_requested then
        event_kind := 'cancel_requested';
    elsif new.progress_json is distinct from old.progress_json then
        event_kind := 'progress';
    else
        return null;
    end if;
    perform pg_advisory_xact_lock(7406371001);
    insert into job_event (tenant_id, job_id, kind, state, attempt, cancel_requested, progress_json,
                           failure_code, failure_message, created_at)
    values (new.tenant_id, new.id, event_kind, new.state, new.attempt, new.cancel_requested,
            new.progress_json, new.failure_code, new.failure_message, new.updated_at)
    returning id into event_id;
    if event_kind = 'state' and new.callback_url is not null then
        insert into webhook_delivery (event_id, tenant_id, job_id, url, next_attempt_at, created_at)
        values (event_id, new.tenant_id, new.id, new.callback_url, new.updated_at, new.updated_at);
    end if;
    return null;
end
$$;

create trigger job_event_after_write after insert or update on job
    for each row execute function job_event_record();
