-- Uploads are staged: the dataset row and its chunks are committed as they stream in (each chunk in a short
-- transaction of its own) under state 'staging', invisible to every read, and published with one update to
-- 'ready' once the whole body has been received and parsed. A sweeper deletes staging rows whose upload
-- stopped (updated_at is touched with every chunk).
alter table dataset add column state text not null default 'ready';
create index dataset_staging on dataset (updated_at) where state = 'staging';
