"""What publications of tables (``bidir/``) and of collections (``collections/``) share, below both: a step's
outcome and its bookkeeping, the steps of a sync job, the pull and push leases, the job's process, and
telling people about conflicts (the notifier and the owners' mails)."""
