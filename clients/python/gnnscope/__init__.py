"""gnnscope: the Python client (see clients/python/README.md)."""
