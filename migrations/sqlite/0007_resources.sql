-- Resources a dashboard can list and manage. Kept column for column equal on both backends.
-- A stored hierarchy's shape, so that lists need not parse documents: 'levels' or 'builder', its levels
-- (value and top included) and, for levels, its original values. Rows stored before stay null and are
-- read from their document.
alter table hierarchy add column kind text;
alter table hierarchy add column level_count bigint;
alter table hierarchy add column value_count bigint;
create index hierarchy_tenant_page on hierarchy (tenant_id, created_at, id);
-- The stored hierarchies each job references, so that one in use by a live job is not deleted: deleting a
-- hierarchy first removes the links of finished jobs, then the row; a link left (a queued or running job,
-- also one committed meanwhile) fails the delete on this foreign key.
create table job_hierarchy (
    job_id text not null references job (id) on delete cascade,
    hierarchy_id text not null references hierarchy (id),
    primary key (job_id, hierarchy_id)
);
create index job_hierarchy_hierarchy on job_hierarchy (hierarchy_id);
-- A job's display name, free labels (JSON array of strings; job_label indexes them for filtering), what
-- it asked for (JSON: model, algorithm), set at submission, and what it achieved (JSON: achieved k,
-- suppressed records, warnings), set when it succeeds.
alter table job add column name text;
alter table job add column labels_json text not null default '[]';
alter table job add column summary_json text;
alter table job add column outcome_json text;
create table job_label (
    job_id text not null references job (id) on delete cascade,
    tenant_id text not null,
    label text not null,
    primary key (job_id, label)
);
create index job_label_tenant on job_label (tenant_id, label);
