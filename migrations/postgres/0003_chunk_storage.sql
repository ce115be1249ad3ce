-- Chunks are CSV bytes (often already gzip-compressed by clients, and re-compressed by nobody): store them
-- out of line without pglz compression, which costs upload throughput for little space.
alter table dataset_chunk alter column bytes set storage external;
alter table job_output_chunk alter column bytes set storage external;
