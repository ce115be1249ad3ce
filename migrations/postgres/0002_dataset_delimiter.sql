-- The one-character field delimiter a dataset was uploaded with; jobs read the stored bytes with it.
alter table dataset add column delimiter text not null default ',';
