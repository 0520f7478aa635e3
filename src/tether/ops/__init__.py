"""Operations: the command line (and later the approvals server and workers)."""
