-- Claims are fair across tenants: the claim ranks the tenants with claimable work by their running jobs,
-- then by their latest start, and takes the chosen tenant's oldest claimable job. Each of these is one
-- short index range per tenant, whatever the depth of the queue.
-- the tenant's oldest queued (or expired) job
create index job_tenant_claimable on job (tenant_id, created_at, id) where state in ('queued', 'running');
-- the tenant's running jobs with a live lease
create index job_tenant_running on job (tenant_id, lease_expires_at) where state = 'running';
-- the tenant's latest start
create index job_tenant_started on job (tenant_id, started_at);
-- the first-in first-out claim over all tenants is gone
drop index job_claimable;
