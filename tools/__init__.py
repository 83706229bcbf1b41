"""Tools that make the package's shipped data, run by hand from a checkout (``python -m tools.NAME``)."""
