-- When a key last authenticated a request, in unix milliseconds (null: never). Written at most about once a
-- minute per key, so it is a recency hint for `anonymizer keys list`, not a request log (see the audit trail).
alter table api_key add column last_used_at bigint;
