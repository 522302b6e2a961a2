"""Operations: what a statement or an API call does (create, drop, purge), on the catalog and the databases."""
