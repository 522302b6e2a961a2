"""Sessions on source and destination databases (``sessions``) and their errors as people read them (``errors``)."""
